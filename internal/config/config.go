// Package config builds the typed configuration from flags and TOCSIN_*
// environment variables, validates it as a whole and prints it redacted.
// Only cmd imports it.
package config

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/clientaddr"
	"github.com/tocsin/tocsin/internal/mailer"
	"github.com/tocsin/tocsin/internal/secrets"
)

// Config is everything `tocsin serve` needs.
type Config struct {
	Listen          string
	MetricsListen   string // "": /metrics on Listen; else there only
	DatabaseURL     string
	DataDir         string
	BaseURL         string
	SecretKeys      string // TOCSIN_SECRET_KEYS; never printed
	LogLevel        string
	LogFormat       string
	ShutdownTimeout time.Duration
	// RatePerMinute is each API key's budget. The API contract is 600;
	// operators may change it for their own deployment (or benchmarks).
	RatePerMinute int
	// PageRatePerMinute is each client address's budget on the public
	// status pages, far above what a person reading them needs.
	PageRatePerMinute int
	// MetricsPointsPerResponse bounds a metrics answer's points;
	// MetricsPointsPerMinute is each API key's budget of them;
	// MetricsHeavyQueries the large metrics queries this node runs at once
	// (0: half its CPUs, at least 1).
	MetricsPointsPerResponse, MetricsPointsPerMinute, MetricsHeavyQueries int

	// BlockPrivateTargets refuses checks (and later webhooks) to loopback,
	// private, link-local, CGNAT and metadata addresses.
	BlockPrivateTargets bool

	// TrustedProxies are the reverse proxies whose forwarding headers name
	// the client (--trusted-proxies); by default none.
	TrustedProxies clientaddr.Resolver

	// The check engine.
	NodeName         string // names this node's checks (probe) in observations
	Region           string // where this node runs
	CheckConcurrency int    // checks in flight at once
	RetentionDays    int    // raw observations are kept this many days
	// Metrics rollups are kept this many days: hourly ones at least as long
	// as raw observations, daily ones at least as long as hourly ones.
	HourlyRetentionDays, DailyRetentionDays int
	Canaries                                []string // host:port targets this probe should always reach

	// E-mail channels send through this server; without it they are
	// unavailable. The URL may hold a password and is never printed whole.
	SMTPURL  string // smtp://user:pass@host:587 (STARTTLS) or smtps://…:465
	SMTPFrom string // the From address, e.g. "Tocsin <tocsin@example.com>"

	// Quotas for every workspace without an override of its own (`tocsin
	// workspace set-quota`). Zero is the built-in default; MaxHeartbeats
	// zero follows MaxMonitors.
	MaxMonitors, MaxHeartbeats, MaxMaintenanceWindows, MaxChannels int
	MinInterval                                                    time.Duration
	rawQuotas                                                      quotaFlags

	// As given, to quote in problems; empty for a Config built in code.
	rawTimeout, rawRate, rawBlock, rawConcurrency, rawRetention, rawCanaries string
	rawProxies, rawHourly, rawDaily, rawPageRate                             string
	rawResponsePoints, rawPoints, rawHeavy                                   string
}

// setting ties a flag to its environment variable.
type setting struct {
	flag, env, usage string
	def              string
	dst              *string
}

func settings(c *Config, timeout, rate, block, conc, retention, canaries *string) []setting {
	return []setting{
		{"listen", "TOCSIN_LISTEN", "address to listen on", ":8080", &c.Listen},
		{"metrics-listen", "TOCSIN_METRICS_LISTEN", "serve /metrics on this address only (e.g. 127.0.0.1:9090); default: on the listen address", "", &c.MetricsListen},
		{"database-url", "TOCSIN_DATABASE_URL", "postgres://… for PostgreSQL; default: SQLite in the data dir", "", &c.DatabaseURL},
		{"data-dir", "TOCSIN_DATA_DIR", "where SQLite and the generated key file live", "./tocsin-data", &c.DataDir},
		{"base-url", "TOCSIN_BASE_URL", "public URL of this service; default http://localhost:<port>", "", &c.BaseURL},
		{"secret-keys", "TOCSIN_SECRET_KEYS", "keyring for secrets at rest: k2:<64 hex>,k1:<64 hex> (first encrypts)", "", &c.SecretKeys},
		{"log-level", "TOCSIN_LOG_LEVEL", "debug, info, warn or error", "info", &c.LogLevel},
		{"log-format", "TOCSIN_LOG_FORMAT", "text or json", "text", &c.LogFormat},
		{"shutdown-timeout", "TOCSIN_SHUTDOWN_TIMEOUT", "how long SIGTERM waits for in-flight requests", "30s", timeout},
		{"rate-limit", "TOCSIN_RATE_LIMIT", "requests per minute per API key (the API contract is 600)", "600", rate},
		{"block-private-targets", "TOCSIN_BLOCK_PRIVATE_TARGETS", "refuse checks to loopback, private, link-local and metadata addresses (true or false)", "false", block},
		{"trusted-proxies", "TOCSIN_TRUSTED_PROXIES", "comma-separated CIDR prefixes of reverse proxies whose X-Forwarded-For or Forwarded header names the client; default none", "", &c.rawProxies},
		{"node-name", "TOCSIN_NODE_NAME", "this node's name in observations; default the host name", "", &c.NodeName},
		{"region", "TOCSIN_REGION", "where this node runs, shown with its observations", "local", &c.Region},
		{"check-concurrency", "TOCSIN_CHECK_CONCURRENCY", "checks in flight at once on this node", "512", conc},
		{"observation-retention-days", "TOCSIN_OBSERVATION_RETENTION_DAYS", "days raw observations and pings are kept (once rolled up)", "30", retention},
		{"hourly-rollup-retention-days", "TOCSIN_HOURLY_ROLLUP_RETENTION_DAYS", "days hourly metrics rollups are kept (hourly series reach this far back)", "90", &c.rawHourly},
		{"daily-rollup-retention-days", "TOCSIN_DAILY_ROLLUP_RETENTION_DAYS", "days daily metrics rollups are kept (check counts and latencies reach this far back)", "400", &c.rawDaily},
		{"status-page-rate-limit", "TOCSIN_STATUS_PAGE_RATE_LIMIT", "requests a minute each client address may make to the public status pages (bursts of a quarter of it)", "1200", &c.rawPageRate},
		{"metrics-points-per-response", "TOCSIN_METRICS_POINTS_PER_RESPONSE", "metrics points one answer may hold: a listing answers fewer subjects, one subject over it is refused", "10000", &c.rawResponsePoints},
		{"metrics-points-per-minute", "TOCSIN_METRICS_POINTS_PER_MINUTE", "metrics points an API key may spend a minute (a subject's figures are 1 point, each bucket of its series 1 more)", "60000", &c.rawPoints},
		{"metrics-heavy-queries", "TOCSIN_METRICS_HEAVY_QUERIES", "metrics queries of 100 points or more this node runs at once; 0: half its CPUs, at least 1", "0", &c.rawHeavy},
		{"probe-canaries", "TOCSIN_PROBE_CANARIES", "comma-separated host:port targets this node should always reach; when a check fails and they fail too, the result is unknown", "", canaries},
		{"smtp-url", "TOCSIN_SMTP_URL", "SMTP server for e-mail channels: smtp://user:pass@host:587 (STARTTLS; ?tls=none for a local relay) or smtps://user:pass@host:465; default none, e-mail unavailable", "", &c.SMTPURL},
		{"smtp-from", "TOCSIN_SMTP_FROM", "From address of e-mail notifications, e.g. \"Tocsin <tocsin@example.com>\"; required with smtp-url", "", &c.SMTPFrom},
	}
}

// Parse reads flags (which win) over environment variables over defaults.
// extra may register a command's own flags. Call Validate (serve) or
// ValidateDatabase (admin commands) next; both report all problems at once.
func Parse(name string, args []string, getenv func(string) string, extra func(*flag.FlagSet)) (Config, error) {
	return ParseOnly(name, args, getenv, nil, extra)
}

// DatabaseFlags are the settings an operator command that only opens the
// database takes as flags.
var DatabaseFlags = []string{"database-url", "data-dir", "log-level", "log-format"}

// ParseOnly is Parse for a command that takes only the named settings as
// flags (nil: all), so its -h lists its own; the others still come from
// their environment variables or defaults.
func ParseOnly(name string, args []string, getenv func(string) string, only []string, extra func(*flag.FlagSet)) (Config, error) {
	var c Config
	var timeout, rate, block, conc, retention, canaries string
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	for _, s := range settings(&c, &timeout, &rate, &block, &conc, &retention, &canaries) {
		def := s.def
		if v := getenv(s.env); v != "" {
			def = v
		}
		if only != nil && !slices.Contains(only, s.flag) {
			*s.dst = def
			continue
		}
		fs.StringVar(s.dst, s.flag, def, s.usage+" (env "+s.env+")")
	}
	var q quotaFlags
	for _, s := range quotaSettings(&q) {
		def := s.def
		if v := getenv(s.env); v != "" {
			def = v
		}
		if only != nil && !slices.Contains(only, s.flag) {
			*s.dst = def
			continue
		}
		fs.StringVar(s.dst, s.flag, def, s.usage+" (env "+s.env+")")
	}
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	// Unparsable values become out of range, so Validate reports them with
	// every other problem.
	c.rawTimeout, c.rawRate, c.rawBlock = timeout, rate, block
	c.rawConcurrency, c.rawRetention, c.rawCanaries = conc, retention, canaries
	c.CheckConcurrency, _ = strconv.Atoi(conc)
	c.RetentionDays, _ = strconv.Atoi(retention)
	c.HourlyRetentionDays, _ = strconv.Atoi(c.rawHourly)
	c.DailyRetentionDays, _ = strconv.Atoi(c.rawDaily)
	c.PageRatePerMinute, _ = strconv.Atoi(c.rawPageRate)
	c.MetricsPointsPerResponse, _ = strconv.Atoi(c.rawResponsePoints)
	c.MetricsPointsPerMinute, _ = strconv.Atoi(c.rawPoints)
	if n, err := strconv.Atoi(c.rawHeavy); err == nil {
		c.MetricsHeavyQueries = n
	} else {
		c.MetricsHeavyQueries = -1 // Validate reports it
	}
	for _, cn := range strings.Split(canaries, ",") {
		if cn = strings.TrimSpace(cn); cn != "" {
			c.Canaries = append(c.Canaries, cn)
		}
	}
	if c.NodeName == "" {
		c.NodeName, _ = os.Hostname()
	}
	c.BlockPrivateTargets, _ = strconv.ParseBool(block)
	c.TrustedProxies, _ = clientaddr.Parse(c.rawProxies) // Validate reports what it refused
	c.ShutdownTimeout, _ = time.ParseDuration(timeout)
	if n, err := strconv.Atoi(rate); err == nil {
		c.RatePerMinute = n
	}
	c.setQuotas(q)
	if c.DatabaseURL == "" {
		c.DatabaseURL = "sqlite:" + filepath.Join(c.DataDir, "tocsin.db")
	}
	if c.BaseURL == "" {
		_, port, _ := net.SplitHostPort(c.Listen)
		c.BaseURL = "http://localhost:" + port
	}
	return c, nil
}

// IsPostgres reports whether the database is PostgreSQL.
func (c Config) IsPostgres() bool {
	return strings.HasPrefix(c.DatabaseURL, "postgres://") || strings.HasPrefix(c.DatabaseURL, "postgresql://")
}

// ValidateDatabase checks what every command needs: the database.
func (c Config) ValidateDatabase() error {
	if !c.IsPostgres() && !strings.HasPrefix(c.DatabaseURL, "sqlite:") && !strings.HasPrefix(c.DatabaseURL, "file:") {
		return fmt.Errorf("database-url: must start with postgres://, postgresql://, sqlite: or file:")
	}
	return nil
}

// Validate checks everything serve needs and lists every problem.
func (c Config) Validate() error {
	var p []error
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		p = append(p, fmt.Errorf("listen: %q must be host:port or :port", c.Listen))
	}
	if c.MetricsListen != "" {
		if _, port, err := net.SplitHostPort(c.MetricsListen); err != nil {
			p = append(p, fmt.Errorf("metrics-listen: %q must be host:port or :port", c.MetricsListen))
		} else if c.MetricsListen == c.Listen && port != "0" {
			p = append(p, fmt.Errorf("metrics-listen: %q is the listen address; give another, or leave it empty to serve /metrics there", c.MetricsListen))
		}
	}
	if err := c.ValidateDatabase(); err != nil {
		p = append(p, err)
	}
	if u, err := url.Parse(c.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p = append(p, fmt.Errorf("base-url: %q must be an absolute http(s) URL", c.BaseURL))
	} else if u.Path != "" && u.Path != "/" {
		p = append(p, fmt.Errorf("base-url: %q must not have a path", c.BaseURL))
	}
	if c.SecretKeys != "" {
		if _, err := secrets.ParseKeyring(c.SecretKeys); err != nil {
			p = append(p, fmt.Errorf("secret-keys: %w", err))
		}
	} else if c.IsPostgres() {
		p = append(p, errors.New("secret-keys: required with PostgreSQL, so every node encrypts with the same keys; generate one with `tocsin secret-key`"))
	}
	if c.ShutdownTimeout <= 0 {
		p = append(p, fmt.Errorf("shutdown-timeout: %s must be a positive duration such as 30s", quoted(c.rawTimeout, c.ShutdownTimeout.String())))
	}
	if c.RatePerMinute < 1 || c.RatePerMinute > 1_000_000 {
		p = append(p, fmt.Errorf("rate-limit: %s must be a whole number from 1 to 1000000", quoted(c.rawRate, strconv.Itoa(c.RatePerMinute))))
	}
	if c.PageRatePerMinute < 4 || c.PageRatePerMinute > 10_000_000 {
		p = append(p, fmt.Errorf("status-page-rate-limit: %s must be a whole number from 4 to 10000000", quoted(c.rawPageRate, strconv.Itoa(c.PageRatePerMinute))))
	}
	// A response and a scrape of the most subjects (10,000 over 2
	// windows) must fit a minute's budget, or they could never be answered.
	least := 20_000
	if c.MetricsPointsPerResponse < 100 || c.MetricsPointsPerResponse > 1_000_000 {
		p = append(p, fmt.Errorf("metrics-points-per-response: %s must be a whole number from 100 to 1000000", quoted(c.rawResponsePoints, strconv.Itoa(c.MetricsPointsPerResponse))))
	} else {
		least = max(least, c.MetricsPointsPerResponse)
	}
	if c.MetricsPointsPerMinute < least || c.MetricsPointsPerMinute > 100_000_000 {
		p = append(p, fmt.Errorf("metrics-points-per-minute: %s must be a whole number from %d (20000, and at least metrics-points-per-response) to 100000000", quoted(c.rawPoints, strconv.Itoa(c.MetricsPointsPerMinute)), least))
	}
	if c.MetricsHeavyQueries < 0 || c.MetricsHeavyQueries > 1024 {
		p = append(p, fmt.Errorf("metrics-heavy-queries: %s must be a whole number from 0 (half the CPUs) to 1024", quoted(c.rawHeavy, strconv.Itoa(c.MetricsHeavyQueries))))
	}
	if _, err := strconv.ParseBool(c.rawBlock); c.rawBlock != "" && err != nil {
		p = append(p, fmt.Errorf("block-private-targets: %q must be true or false", c.rawBlock))
	}
	if _, err := clientaddr.Parse(c.rawProxies); err != nil {
		p = append(p, fmt.Errorf("trusted-proxies: %w", err))
	}
	if c.CheckConcurrency < 1 || c.CheckConcurrency > 100_000 {
		p = append(p, fmt.Errorf("check-concurrency: %s must be a whole number from 1 to 100000", quoted(c.rawConcurrency, strconv.Itoa(c.CheckConcurrency))))
	}
	if c.RetentionDays < 1 || c.RetentionDays > 3650 {
		p = append(p, fmt.Errorf("observation-retention-days: %s must be a whole number from 1 to 3650", quoted(c.rawRetention, strconv.Itoa(c.RetentionDays))))
	}
	if c.HourlyRetentionDays < max(c.RetentionDays, 1) || c.HourlyRetentionDays > 3650 {
		p = append(p, fmt.Errorf("hourly-rollup-retention-days: %s must be a whole number from observation-retention-days (%d) to 3650: hourly rollups replace raw rows", quoted(c.rawHourly, strconv.Itoa(c.HourlyRetentionDays)), c.RetentionDays))
	}
	if c.DailyRetentionDays < max(c.HourlyRetentionDays, 1) || c.DailyRetentionDays > 36500 {
		p = append(p, fmt.Errorf("daily-rollup-retention-days: %s must be a whole number from hourly-rollup-retention-days (%d) to 36500: daily rollups replace hourly ones", quoted(c.rawDaily, strconv.Itoa(c.DailyRetentionDays)), c.HourlyRetentionDays))
	}
	for _, cn := range c.Canaries {
		if _, port, err := net.SplitHostPort(cn); err != nil || port == "" {
			p = append(p, fmt.Errorf("probe-canaries: %q must be host:port", cn))
		}
	}
	// Both are stored with every observation: text a database would refuse
	// would make every check of this node unstorable.
	if c.NodeName == "" || len(c.NodeName) > 100 || !clean.Valid(c.NodeName) {
		p = append(p, fmt.Errorf("node-name: %q must be 1 to 100 characters of UTF-8 without NUL", c.NodeName))
	}
	if len(c.Region) > 100 || !clean.Valid(c.Region) {
		p = append(p, fmt.Errorf("region: %q must be at most 100 characters of UTF-8 without NUL", c.Region))
	}
	if c.SMTPURL != "" {
		// ParseURL's problems never quote the URL, which may hold a password.
		if _, err := mailer.ParseURL(c.SMTPURL); err != nil {
			p = append(p, fmt.Errorf("smtp-url: %w", err))
		}
		if c.SMTPFrom == "" {
			p = append(p, errors.New(`smtp-from: required with smtp-url, e.g. "Tocsin <tocsin@example.com>"`))
		}
	}
	if c.SMTPFrom != "" {
		if _, err := mail.ParseAddress(c.SMTPFrom); err != nil {
			p = append(p, fmt.Errorf(`smtp-from: %q must be one address such as "Tocsin <tocsin@example.com>"`, c.SMTPFrom))
		}
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		p = append(p, fmt.Errorf("log-level: %q must be debug, info, warn or error", c.LogLevel))
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		p = append(p, fmt.Errorf("log-format: %q must be text or json", c.LogFormat))
	}
	p = append(p, c.quotaProblems()...)
	return errors.Join(p...)
}

// Redacted prints the configuration with secrets hidden.
func (c Config) Redacted() string {
	keys := "(none: key file in data dir)"
	if c.SecretKeys != "" {
		keys = fmt.Sprintf("(set, %d keys)", strings.Count(c.SecretKeys, ",")+1)
	}
	return fmt.Sprintf("listen=%s metrics-listen=%s database=%s data-dir=%s base-url=%s secret-keys=%s log-level=%s log-format=%s shutdown-timeout=%s rate-limit=%d/min status-page-rate-limit=%d/min metrics-points-per-response=%d metrics-points-per-minute=%d metrics-heavy-queries=%d block-private-targets=%t trusted-proxies=%s node-name=%s region=%s check-concurrency=%d observation-retention-days=%d hourly-rollup-retention-days=%d daily-rollup-retention-days=%d probe-canaries=%s smtp-url=%s smtp-from=%q",
		c.Listen, c.MetricsListen, RedactURL(c.DatabaseURL), c.DataDir, c.BaseURL, keys, c.LogLevel, c.LogFormat, c.ShutdownTimeout, c.RatePerMinute, c.PageRatePerMinute, c.MetricsPointsPerResponse, c.MetricsPointsPerMinute, c.MetricsHeavyQueries, c.BlockPrivateTargets, c.TrustedProxies,
		c.NodeName, c.Region, c.CheckConcurrency, c.RetentionDays, c.HourlyRetentionDays, c.DailyRetentionDays, strings.Join(c.Canaries, ","), redactSMTP(c.SMTPURL), c.SMTPFrom) +
		c.redactedQuotas()
}

// redactSMTP prints the SMTP URL as parsed, its password replaced by ***.
func redactSMTP(s string) string {
	if s == "" {
		return "(none: e-mail unavailable)"
	}
	server, err := mailer.ParseURL(s)
	if err != nil {
		return "(invalid SMTP URL)" // it may still hold a password
	}
	return server.String()
}

// RedactURL is a database URL fit to print: its password replaced, and
// anything that is not a database URL not shown at all.
func RedactURL(s string) string {
	if !strings.HasPrefix(s, "postgres://") && !strings.HasPrefix(s, "postgresql://") &&
		!strings.HasPrefix(s, "sqlite:") && !strings.HasPrefix(s, "file:") {
		return "(not a database URL)" // e.g. a key=value DSN, which may hold a password
	}
	u, err := url.Parse(s)
	if err != nil {
		return "(unparseable URL)"
	}
	if u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "REDACTED")
		}
	}
	q := u.Query()
	for _, k := range []string{"password", "sslpassword"} {
		if q.Has(k) {
			q.Set(k, "REDACTED")
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// quoted names a value as the operator gave it, when known.
func quoted(raw, parsed string) string {
	if raw != "" {
		return strconv.Quote(raw)
	}
	return parsed
}
