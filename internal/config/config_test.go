package config_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/config"
)

// Two well-formed keys (64 hex characters each) for TOCSIN_SECRET_KEYS.
const (
	key1 = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	key2 = "ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func parse(t *testing.T, args []string, vars map[string]string) config.Config {
	t.Helper()
	c, err := config.Parse("serve", args, env(vars), nil)
	if err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	return c
}

func hostname(t *testing.T) string {
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestParseDefaults(t *testing.T) {
	c := parse(t, nil, nil)
	want := config.Config{
		Listen:            ":8080",
		DatabaseURL:       "sqlite:" + filepath.Join("tocsin-data", "tocsin.db"),
		DataDir:           "./tocsin-data",
		BaseURL:           "http://localhost:8080",
		LogLevel:          "info",
		LogFormat:         "text",
		ShutdownTimeout:   30 * time.Second,
		RatePerMinute:     600,
		PageRatePerMinute: 1200,
		// Metrics: 0 heavy queries is half the CPUs (app).
		MetricsPointsPerResponse: 10_000, MetricsPointsPerMinute: 60_000,
		NodeName:            hostname(t),
		Region:              "local",
		CheckConcurrency:    512,
		RetentionDays:       30,
		HourlyRetentionDays: 90,
		DailyRetentionDays:  400,
		// Quotas: as before they were settings; heartbeats follow monitors.
		MaxMonitors: 1000, MinInterval: 10 * time.Second, MaxMaintenanceWindows: 100, MaxChannels: 100,
	}
	if !sameExported(c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
	if c.IsPostgres() {
		t.Error("the default database is PostgreSQL")
	}
	if err := c.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
}

// TestParsePrecedence: for every setting, a flag wins over the environment,
// which wins over the default.
func TestParsePrecedence(t *testing.T) {
	type get func(config.Config) string
	settings := []struct {
		flag, env  string
		def        string
		fromEnv    string
		fromFlag   string
		get        get
		wantEnv    string // when the parsed form differs from the input
		wantFlag   string
		wantDefStr string
	}{
		{flag: "listen", env: "TOCSIN_LISTEN", def: ":8080", fromEnv: ":7000", fromFlag: "127.0.0.1:9000",
			get: func(c config.Config) string { return c.Listen }},
		{flag: "database-url", env: "TOCSIN_DATABASE_URL", def: "sqlite:" + filepath.Join("tocsin-data", "tocsin.db"),
			fromEnv: "postgres://env-host/db", fromFlag: "postgres://flag-host/db",
			get: func(c config.Config) string { return c.DatabaseURL }},
		{flag: "data-dir", env: "TOCSIN_DATA_DIR", def: "./tocsin-data", fromEnv: "/var/lib/env", fromFlag: "/var/lib/flag",
			get: func(c config.Config) string { return c.DataDir }},
		{flag: "base-url", env: "TOCSIN_BASE_URL", def: "http://localhost:8080", fromEnv: "https://env.example", fromFlag: "https://flag.example",
			get: func(c config.Config) string { return c.BaseURL }},
		{flag: "secret-keys", env: "TOCSIN_SECRET_KEYS", def: "", fromEnv: "k1:" + key1, fromFlag: "k2:" + key2,
			get: func(c config.Config) string { return c.SecretKeys }},
		{flag: "log-level", env: "TOCSIN_LOG_LEVEL", def: "info", fromEnv: "warn", fromFlag: "debug",
			get: func(c config.Config) string { return c.LogLevel }},
		{flag: "log-format", env: "TOCSIN_LOG_FORMAT", def: "text", fromEnv: "json", fromFlag: "text",
			get: func(c config.Config) string { return c.LogFormat }},
		{flag: "shutdown-timeout", env: "TOCSIN_SHUTDOWN_TIMEOUT", def: "30s", fromEnv: "1m", fromFlag: "5s",
			get: func(c config.Config) string { return c.ShutdownTimeout.String() }, wantEnv: "1m0s", wantDefStr: "30s"},
		{flag: "rate-limit", env: "TOCSIN_RATE_LIMIT", def: "600", fromEnv: "1200", fromFlag: "60",
			get: func(c config.Config) string { return strconv.Itoa(c.RatePerMinute) }},
		{flag: "status-page-rate-limit", env: "TOCSIN_STATUS_PAGE_RATE_LIMIT", def: "1200", fromEnv: "6000", fromFlag: "100",
			get: func(c config.Config) string { return strconv.Itoa(c.PageRatePerMinute) }},
		{flag: "metrics-points-per-response", env: "TOCSIN_METRICS_POINTS_PER_RESPONSE", def: "10000", fromEnv: "5000", fromFlag: "20000",
			get: func(c config.Config) string { return strconv.Itoa(c.MetricsPointsPerResponse) }},
		{flag: "metrics-points-per-minute", env: "TOCSIN_METRICS_POINTS_PER_MINUTE", def: "60000", fromEnv: "120000", fromFlag: "30000",
			get: func(c config.Config) string { return strconv.Itoa(c.MetricsPointsPerMinute) }},
		{flag: "metrics-heavy-queries", env: "TOCSIN_METRICS_HEAVY_QUERIES", def: "0", fromEnv: "4", fromFlag: "1",
			get: func(c config.Config) string { return strconv.Itoa(c.MetricsHeavyQueries) }},
		{flag: "smtp-url", env: "TOCSIN_SMTP_URL", def: "", fromEnv: "smtp://u:p@env-mail:587", fromFlag: "smtps://u:p@flag-mail",
			get: func(c config.Config) string { return c.SMTPURL }},
		{flag: "smtp-from", env: "TOCSIN_SMTP_FROM", def: "", fromEnv: "env@example.com", fromFlag: "Tocsin <flag@example.com>",
			get: func(c config.Config) string { return c.SMTPFrom }},
		{flag: "max-monitors", env: "TOCSIN_MAX_MONITORS", def: "1000", fromEnv: "5000", fromFlag: "20000",
			get: func(c config.Config) string { return strconv.Itoa(c.MaxMonitors) }},
		{flag: "max-heartbeats", env: "TOCSIN_MAX_HEARTBEATS", def: "0", fromEnv: "50", fromFlag: "70",
			get: func(c config.Config) string { return strconv.Itoa(c.MaxHeartbeats) }},
		{flag: "min-interval", env: "TOCSIN_MIN_INTERVAL", def: "10s", fromEnv: "1m", fromFlag: "30s",
			get: func(c config.Config) string { return c.MinInterval.String() }, wantEnv: "1m0s"},
		{flag: "max-maintenance-windows", env: "TOCSIN_MAX_MAINTENANCE_WINDOWS", def: "100", fromEnv: "300", fromFlag: "7",
			get: func(c config.Config) string { return strconv.Itoa(c.MaxMaintenanceWindows) }},
		{flag: "max-channels", env: "TOCSIN_MAX_CHANNELS", def: "100", fromEnv: "250", fromFlag: "3",
			get: func(c config.Config) string { return strconv.Itoa(c.MaxChannels) }},
	}
	for _, s := range settings {
		t.Run(s.flag, func(t *testing.T) {
			wantEnv := s.fromEnv
			if s.wantEnv != "" {
				wantEnv = s.wantEnv
			}
			wantFlag := s.fromFlag
			if s.wantFlag != "" {
				wantFlag = s.wantFlag
			}
			cases := []struct {
				name string
				args []string
				vars map[string]string
				want string
			}{
				{"default", nil, nil, s.def},
				{"env", nil, map[string]string{s.env: s.fromEnv}, wantEnv},
				{"flag", []string{"--" + s.flag, s.fromFlag}, nil, wantFlag},
				{"flag=value", []string{"--" + s.flag + "=" + s.fromFlag}, nil, wantFlag},
				{"flag over env", []string{"-" + s.flag, s.fromFlag}, map[string]string{s.env: s.fromEnv}, wantFlag},
				{"empty env is unset", nil, map[string]string{s.env: ""}, s.def},
			}
			for _, c := range cases {
				if got := s.get(parse(t, c.args, c.vars)); got != c.want {
					t.Errorf("%s: %s = %q, want %q", c.name, s.flag, got, c.want)
				}
			}
		})
	}
}

// TestParseDerivedDefaults: the base URL follows the listen port and the
// SQLite file follows the data dir, unless set explicitly.
func TestParseDerivedDefaults(t *testing.T) {
	cases := []struct {
		name        string
		args        []string
		vars        map[string]string
		wantBaseURL string
		wantDB      string
	}{
		{"defaults", nil, nil, "http://localhost:8080", "sqlite:" + filepath.Join("tocsin-data", "tocsin.db")},
		{"listen flag", []string{"--listen", "127.0.0.1:9000"}, nil, "http://localhost:9000", ""},
		{"listen env", nil, map[string]string{"TOCSIN_LISTEN": "0.0.0.0:7000"}, "http://localhost:7000", ""},
		{"listen flag over env", []string{"--listen", ":9001"}, map[string]string{"TOCSIN_LISTEN": ":7000"}, "http://localhost:9001", ""},
		{"listen IPv6", []string{"--listen", "[::1]:8443"}, nil, "http://localhost:8443", ""},
		{"explicit base URL", []string{"--listen", ":9000", "--base-url", "https://status.example"}, nil, "https://status.example", ""},
		{"data dir flag", []string{"--data-dir", "/var/lib/tocsin"}, nil, "", "sqlite:" + filepath.Join("/var/lib/tocsin", "tocsin.db")},
		{"data dir env", nil, map[string]string{"TOCSIN_DATA_DIR": "/srv/t"}, "", "sqlite:" + filepath.Join("/srv/t", "tocsin.db")},
		{"explicit database", []string{"--data-dir", "/x", "--database-url", "postgres://db/t"}, nil, "", "postgres://db/t"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := parse(t, c.args, c.vars)
			if c.wantBaseURL != "" && cfg.BaseURL != c.wantBaseURL {
				t.Errorf("BaseURL = %q, want %q", cfg.BaseURL, c.wantBaseURL)
			}
			if c.wantDB != "" && cfg.DatabaseURL != c.wantDB {
				t.Errorf("DatabaseURL = %q, want %q", cfg.DatabaseURL, c.wantDB)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		vars map[string]string
		want []string // substrings of the error
	}{
		{"unknown flag", []string{"--colour", "red"}, nil, []string{"colour"}},
		{"positional argument", []string{"extra"}, nil, []string{"unexpected arguments: extra"}},
		{"shutdown timeout negative", []string{"--shutdown-timeout", "-1s"}, nil, []string{"shutdown-timeout", "-1s"}},
		{"shutdown timeout zero", []string{"--shutdown-timeout", "0s"}, nil, []string{"shutdown-timeout"}},
		{"shutdown timeout no unit", []string{"--shutdown-timeout", "30"}, nil, []string{"shutdown-timeout"}},
		{"shutdown timeout env", nil, map[string]string{"TOCSIN_SHUTDOWN_TIMEOUT": "soon"}, []string{"shutdown-timeout", "soon"}},
		{"rate limit zero", []string{"--rate-limit", "0"}, nil, []string{"rate-limit"}},
		{"rate limit too high", []string{"--rate-limit", "1000001"}, nil, []string{"rate-limit"}},
		{"rate limit not a number", nil, map[string]string{"TOCSIN_RATE_LIMIT": "lots"}, []string{"rate-limit", "lots"}},
		{"rate limit fraction", []string{"--rate-limit", "1.5"}, nil, []string{"rate-limit"}},
		{"both at once", []string{"--shutdown-timeout", "never", "--rate-limit", "-5"}, nil, []string{"shutdown-timeout", "rate-limit"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// As serve does: problems from parsing and validating, together.
			cfg, err := config.Parse("serve", c.args, env(c.vars), func(fs *flag.FlagSet) { fs.SetOutput(discard{}) })
			err = errors.Join(err, cfg.Validate())
			if err == nil {
				t.Fatal("Parse and Validate accepted it")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
	t.Run("help", func(t *testing.T) {
		_, err := config.Parse("serve", []string{"-h"}, env(nil), func(fs *flag.FlagSet) { fs.SetOutput(discard{}) })
		if !errors.Is(err, flag.ErrHelp) {
			t.Errorf("-h: %v, want flag.ErrHelp", err)
		}
	})
	t.Run("boundaries accepted", func(t *testing.T) {
		for _, r := range []string{"1", "1000000"} {
			c := parse(t, []string{"--rate-limit", r, "--shutdown-timeout", "1ns"}, nil)
			if strconv.Itoa(c.RatePerMinute) != r || c.ShutdownTimeout != time.Nanosecond {
				t.Errorf("rate %s: got %+v", r, c)
			}
		}
	})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestParseExtraFlags: a command may add its own flags beside the common ones.
func TestParseExtraFlags(t *testing.T) {
	var email string
	c, err := config.Parse("key create", []string{"--email", "a@b.example", "--data-dir", "/d"}, env(nil), func(fs *flag.FlagSet) {
		fs.StringVar(&email, "email", "", "")
	})
	if err != nil {
		t.Fatal(err)
	}
	if email != "a@b.example" || c.DataDir != "/d" {
		t.Errorf("email %q, data dir %q", email, c.DataDir)
	}
}

// valid is a configuration that passes Validate, the base of every case.
func valid() config.Config {
	return config.Config{
		Listen:                   ":8080",
		DatabaseURL:              "sqlite:tocsin-data/tocsin.db",
		DataDir:                  "./tocsin-data",
		BaseURL:                  "http://localhost:8080",
		LogLevel:                 "info",
		LogFormat:                "text",
		ShutdownTimeout:          30 * time.Second,
		RatePerMinute:            600,
		PageRatePerMinute:        1200,
		MetricsPointsPerResponse: 10_000, MetricsPointsPerMinute: 60_000,
		NodeName:            "node-1",
		Region:              "local",
		CheckConcurrency:    512,
		RetentionDays:       30,
		HourlyRetentionDays: 90,
		DailyRetentionDays:  400,
	}
}

func smtp(url, from string) func(*config.Config) {
	return func(c *config.Config) { c.SMTPURL, c.SMTPFrom = url, from }
}

// TestValidateEachProblem: each problem alone is reported, naming its setting.
func TestValidateEachProblem(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*config.Config)
		want   string // the setting named in the error; "" = valid
	}{
		{"valid", func(c *config.Config) {}, ""},
		{"listen host:port", func(c *config.Config) { c.Listen = "127.0.0.1:9000" }, ""},
		{"listen IPv6", func(c *config.Config) { c.Listen = "[::]:8080" }, ""},
		{"listen without colon", func(c *config.Config) { c.Listen = "8080" }, "listen"},
		{"listen empty", func(c *config.Config) { c.Listen = "" }, "listen"},
		{"listen URL", func(c *config.Config) { c.Listen = "http://0.0.0.0:80" }, "listen"},
		{"log level debug", func(c *config.Config) { c.LogLevel = "debug" }, ""},
		{"log level warn", func(c *config.Config) { c.LogLevel = "warn" }, ""},
		{"log level error", func(c *config.Config) { c.LogLevel = "error" }, ""},
		{"log level unknown", func(c *config.Config) { c.LogLevel = "loud" }, "log-level"},
		{"log level upper case", func(c *config.Config) { c.LogLevel = "INFO" }, "log-level"},
		{"log level empty", func(c *config.Config) { c.LogLevel = "" }, "log-level"},
		{"log format json", func(c *config.Config) { c.LogFormat = "json" }, ""},
		{"log format unknown", func(c *config.Config) { c.LogFormat = "xml" }, "log-format"},
		{"base URL https", func(c *config.Config) { c.BaseURL = "https://status.example" }, ""},
		{"base URL trailing slash", func(c *config.Config) { c.BaseURL = "https://status.example/" }, ""},
		{"base URL ftp", func(c *config.Config) { c.BaseURL = "ftp://x" }, "base-url"},
		{"base URL without scheme", func(c *config.Config) { c.BaseURL = "status.example" }, "base-url"},
		{"base URL host:port without scheme", func(c *config.Config) { c.BaseURL = "localhost:8080" }, "base-url"},
		{"base URL without host", func(c *config.Config) { c.BaseURL = "https://" }, "base-url"},
		{"base URL with a path", func(c *config.Config) { c.BaseURL = "https://a.example/tocsin" }, "base-url"},
		{"base URL unparseable", func(c *config.Config) { c.BaseURL = "http://a b/%zz" }, "base-url"},
		{"base URL empty", func(c *config.Config) { c.BaseURL = "" }, "base-url"},
		{"database mysql", func(c *config.Config) { c.DatabaseURL = "mysql://db/t" }, "database-url"},
		{"database empty", func(c *config.Config) { c.DatabaseURL = "" }, "database-url"},
		{"postgres without secret keys", func(c *config.Config) { c.DatabaseURL = "postgres://db/t" }, "secret-keys"},
		{"postgresql without secret keys", func(c *config.Config) { c.DatabaseURL = "postgresql://db/t" }, "secret-keys"},
		{"postgres with secret keys", func(c *config.Config) { c.DatabaseURL = "postgres://db/t"; c.SecretKeys = "k1:" + key1 }, ""},
		{"sqlite with secret keys", func(c *config.Config) { c.SecretKeys = "k2:" + key2 + ",k1:" + key1 }, ""},
		{"secret key short", func(c *config.Config) { c.SecretKeys = "k1:" + key1[:62] }, "secret-keys"},
		{"secret key not hex", func(c *config.Config) { c.SecretKeys = "k1:" + strings.Repeat("zz", 32) }, "secret-keys"},
		{"secret key without id", func(c *config.Config) { c.SecretKeys = key1 }, "secret-keys"},
		{"secret key duplicate id", func(c *config.Config) { c.SecretKeys = "k1:" + key1 + ",k1:" + key2 }, "secret-keys"},
		{"secret key empty entry", func(c *config.Config) { c.SecretKeys = "k1:" + key1 + "," }, "secret-keys"},
		{"secret keys blank", func(c *config.Config) { c.SecretKeys = " " }, "secret-keys"},
		{"shutdown timeout zero", func(c *config.Config) { c.ShutdownTimeout = 0 }, "shutdown-timeout"},
		{"shutdown timeout negative", func(c *config.Config) { c.ShutdownTimeout = -time.Second }, "shutdown-timeout"},
		{"rate limit zero", func(c *config.Config) { c.RatePerMinute = 0 }, "rate-limit"},
		{"rate limit negative", func(c *config.Config) { c.RatePerMinute = -1 }, "rate-limit"},
		{"rate limit above 1000000", func(c *config.Config) { c.RatePerMinute = 1_000_001 }, "rate-limit"},
		{"status page rate limit below 4", func(c *config.Config) { c.PageRatePerMinute = 3 }, "status-page-rate-limit"},
		{"status page rate limit above 10000000", func(c *config.Config) { c.PageRatePerMinute = 10_000_001 }, "status-page-rate-limit"},
		{"metrics response points below 100", func(c *config.Config) { c.MetricsPointsPerResponse = 99 }, "metrics-points-per-response"},
		{"metrics response points above 1000000", func(c *config.Config) { c.MetricsPointsPerResponse = 1_000_001 }, "metrics-points-per-response"},
		{"metrics points a minute below 20000", func(c *config.Config) { c.MetricsPointsPerMinute = 19_999 }, "metrics-points-per-minute"},
		{"metrics points a minute below a response", func(c *config.Config) {
			c.MetricsPointsPerResponse, c.MetricsPointsPerMinute = 50_000, 40_000
		}, "metrics-points-per-minute"},
		{"metrics points a minute above 100000000", func(c *config.Config) { c.MetricsPointsPerMinute = 100_000_001 }, "metrics-points-per-minute"},
		{"metrics heavy queries negative", func(c *config.Config) { c.MetricsHeavyQueries = -1 }, "metrics-heavy-queries"},
		{"metrics heavy queries above 1024", func(c *config.Config) { c.MetricsHeavyQueries = 1025 }, "metrics-heavy-queries"},
		{"metrics heavy queries 0: half the CPUs", func(c *config.Config) { c.MetricsHeavyQueries = 0 }, ""},
		{"smtp with STARTTLS", smtp("smtp://tocsin:pw@mail.example.com:587", "Tocsin <tocsin@example.com>"), ""},
		{"smtp default port", smtp("smtp://tocsin:pw@mail.example.com", "tocsin@example.com"), ""},
		{"smtps", smtp("smtps://tocsin:pw@mail.example.com", "tocsin@example.com"), ""},
		{"smtp local relay", smtp("smtp://localhost:25?tls=none", "tocsin@example.com"), ""},
		{"smtp escaped user and password", smtp("smtp://tocsin%40example.com:p%2Fw@[2001:db8::1]:2525", `"Tocsin, ops" <ops@example.com>`), ""},
		{"smtp from without url", smtp("", "tocsin@example.com"), ""},
		{"smtp url http", smtp("http://mail.example.com", "tocsin@example.com"), "smtp-url"},
		{"smtp url without scheme", smtp("mail.example.com:587", "tocsin@example.com"), "smtp-url"},
		{"smtp url without host", smtp("smtp://", "tocsin@example.com"), "smtp-url"},
		{"smtp url bad port", smtp("smtp://mail.example.com:70000", "tocsin@example.com"), "smtp-url"},
		{"smtp url user without password", smtp("smtp://tocsin@mail.example.com", "tocsin@example.com"), "smtp-url"},
		{"smtp url with a path", smtp("smtp://mail.example.com/x", "tocsin@example.com"), "smtp-url"},
		{"smtp url unknown parameter", smtp("smtp://mail.example.com?starttls=optional", "tocsin@example.com"), "smtp-url"},
		{"smtps with tls=none", smtp("smtps://mail.example.com?tls=none", "tocsin@example.com"), "smtp-url"},
		{"smtp url unparseable", smtp("smtp://u:p%zz@mail.example.com", "tocsin@example.com"), "smtp-url"},
		{"smtp from missing", smtp("smtp://mail.example.com", ""), "smtp-from"},
		{"smtp from without @", smtp("smtp://mail.example.com", "tocsin"), "smtp-from"},
		{"smtp from two addresses", smtp("smtp://mail.example.com", "a@example.com, b@example.com"), "smtp-from"},
		{"smtp from with a line break", smtp("smtp://mail.example.com", "a@example.com\r\nBcc: b@example.com"), "smtp-from"},
		{"smtp from invalid without url", smtp("", "not an address"), "smtp-from"},
		{"max monitors raised", func(c *config.Config) { c.MaxMonitors = 1_000_000 }, ""},
		{"max heartbeats too many", func(c *config.Config) { c.MaxHeartbeats = 10_000_001 }, "max-heartbeats"},
		{"max channels negative", func(c *config.Config) { c.MaxChannels = -1 }, "max-channels"},
		{"max maintenance windows negative", func(c *config.Config) { c.MaxMaintenanceWindows = -5 }, "max-maintenance-windows"},
		{"min interval 30s", func(c *config.Config) { c.MinInterval = 30 * time.Second }, ""},
		{"min interval below 10s", func(c *config.Config) { c.MinInterval = 5 * time.Second }, "min-interval"},
		{"min interval fraction", func(c *config.Config) { c.MinInterval = 10500 * time.Millisecond }, "min-interval"},
		{"min interval above the longest", func(c *config.Config) { c.MinInterval = 1000 * time.Hour }, "min-interval"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := valid()
			c.mutate(&cfg)
			err := cfg.Validate()
			if c.want == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted; want a %s problem", c.want)
			}
			if !strings.HasPrefix(err.Error(), c.want+":") {
				t.Errorf("error %q does not start with %q", err, c.want+":")
			}
			if n := len(strings.Split(err.Error(), "\n")); n != 1 {
				t.Errorf("one problem reported as %d: %v", n, err)
			}
		})
	}
}

// TestValidateListsEveryProblem: Validate reports all problems at once, in
// one error, one line each.
func TestValidateListsEveryProblem(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*config.Config)
		want   []string
	}{
		{"postgres without keys", func(c *config.Config) {
			c.Listen = "nope"
			c.LogLevel = "loud"
			c.LogFormat = "xml"
			c.BaseURL = "ftp://x"
			c.DatabaseURL = "postgres://u:pw@db/t"
			c.SecretKeys = ""
			c.ShutdownTimeout = -time.Second
			c.RatePerMinute = 0
		}, []string{"listen", "log-level", "log-format", "base-url", "secret-keys", "shutdown-timeout", "rate-limit"}},
		{"bad keys and database", func(c *config.Config) {
			c.Listen = ""
			c.LogLevel = ""
			c.BaseURL = "https://a.example/sub"
			c.DatabaseURL = "mysql://db"
			c.SecretKeys = "k1:abc"
			c.ShutdownTimeout = 0
			c.RatePerMinute = 2_000_000
			c.CheckConcurrency = 0
			c.RetentionDays = 5000
			c.Canaries = []string{"no-port"}
			c.NodeName = ""
		}, []string{"listen", "log-level", "base-url", "database-url", "secret-keys", "shutdown-timeout", "rate-limit",
			"check-concurrency", "observation-retention-days", "hourly-rollup-retention-days", "probe-canaries", "node-name"}},
		{"rollups kept shorter than what they replace", func(c *config.Config) {
			c.HourlyRetentionDays = 7
			c.DailyRetentionDays = 5
		}, []string{"hourly-rollup-retention-days", "daily-rollup-retention-days"}},
		{"node and region bytes a database refuses", func(c *config.Config) {
			c.NodeName = "node\x00"
			c.Region = "\xff"
		}, []string{"node-name", "region"}},
		{"smtp url and from", func(c *config.Config) {
			c.SMTPURL = "smtp://tocsin:pw@mail.example.com:0"
			c.SMTPFrom = "tocsin"
			c.LogLevel = "loud"
		}, []string{"smtp-url", "smtp-from", "log-level"}},
		{"smtp url without from", func(c *config.Config) {
			c.SMTPURL = "ftp://mail.example.com"
		}, []string{"smtp-url", "smtp-from"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := valid()
			c.mutate(&cfg)
			err := cfg.Validate()
			if err == nil {
				t.Fatal("accepted")
			}
			lines := strings.Split(err.Error(), "\n")
			for _, w := range c.want {
				found := false
				for _, l := range lines {
					found = found || strings.HasPrefix(l, w+":")
				}
				if !found {
					t.Errorf("no %s problem in:\n%v", w, err)
				}
			}
			if len(lines) != len(c.want) {
				t.Errorf("%d problems listed, want %d:\n%v", len(lines), len(c.want), err)
			}
		})
	}
}

// TestParseAndValidateListEveryProblem is serve's path: what Parse finds
// (shutdown timeout, rate limit) joined with what Validate finds.
func TestParseAndValidateListEveryProblem(t *testing.T) {
	args := []string{"--listen", "nope", "--shutdown-timeout", "-1s", "--rate-limit", "0", "--log-format", "xml", "--smtp-from", "nobody"}
	vars := map[string]string{
		"TOCSIN_DATABASE_URL": "postgres://u:pa55word@127.0.0.1:1/x",
		"TOCSIN_LOG_LEVEL":    "loud",
		"TOCSIN_BASE_URL":     "ftp://x",
		"TOCSIN_SMTP_URL":     "smtp://u:sm7p-word@mail.example.com:0",
	}
	c, perr := config.Parse("serve", args, env(vars), nil)
	err := errors.Join(perr, c.Validate())
	if err == nil {
		t.Fatal("accepted")
	}
	for _, w := range []string{"listen", "log-level", "log-format", "base-url", "secret-keys", "shutdown-timeout", "rate-limit", "smtp-url", "smtp-from"} {
		if !strings.Contains(err.Error(), w+":") {
			t.Errorf("no %s problem in:\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "pa55word") {
		t.Errorf("the error leaks the database password:\n%v", err)
	}
	if strings.Contains(err.Error(), "sm7p-word") {
		t.Errorf("the error leaks the SMTP password:\n%v", err)
	}
}

// TestValidateNeverEchoesSecrets: an invalid keyring or database URL is
// described without quoting key material or passwords.
func TestValidateNeverEchoesSecrets(t *testing.T) {
	secretHex := strings.Repeat("ab", 31) + "zz" // 64 characters, not hex
	cases := []struct {
		name   string
		mutate func(*config.Config)
		secret string
	}{
		{"non-hex key", func(c *config.Config) { c.SecretKeys = "k1:" + secretHex }, secretHex},
		{"short key", func(c *config.Config) { c.SecretKeys = "k1:" + key1[:40] }, key1[:40]},
		{"key without id", func(c *config.Config) { c.SecretKeys = key1 }, key1},
		{"key pasted as id", func(c *config.Config) { c.SecretKeys = key1 + ":" + key2 }, key1[:16]},
		{"second key bad", func(c *config.Config) { c.SecretKeys = "k2:" + key2 + ",k1:" + key1[:60] }, key2},
		{"unsupported database with password", func(c *config.Config) { c.DatabaseURL = "mysql://root:hunter22@db/t" }, "hunter22"},
		{"smtp url bad port", smtp("smtp://u:hunter33@mail.example.com:0", "a@example.com"), "hunter33"},
		{"smtp url bad scheme", smtp("http://u:hunter33@mail.example.com", "a@example.com"), "hunter33"},
		{"smtp url unparseable", smtp("smtp://u:hunter33%zz@mail.example.com", "a@example.com"), "hunter33"},
		{"smtp url with a path", smtp("smtp://u:hunter33@mail.example.com/hunter33", "a@example.com"), "hunter33"},
		{"smtp url password as a parameter", smtp("smtp://mail.example.com?password=hunter33", "a@example.com"), "hunter33"},
		{"smtp url bad tls value", smtp("smtp://mail.example.com?tls=hunter33", "a@example.com"), "hunter33"},
		{"smtp url without from", smtp("smtp://u:hunter33@mail.example.com", ""), "hunter33"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := valid()
			c.mutate(&cfg)
			err := cfg.Validate()
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), c.secret) {
				t.Errorf("error echoes the secret: %v", err)
			}
		})
	}
}

func TestValidateDatabase(t *testing.T) {
	cases := []struct {
		url      string
		ok       bool
		postgres bool
	}{
		{"postgres://u:p@db:5432/tocsin?sslmode=disable", true, true},
		{"postgresql://db/tocsin", true, true},
		{"sqlite:tocsin-data/tocsin.db", true, false},
		{"sqlite:/var/lib/tocsin/tocsin.db?_pragma=busy_timeout(5000)", true, false},
		{"file:tocsin.db", true, false},
		{"", false, false},
		{"mysql://db/t", false, false},
		{"POSTGRES://db/t", false, false},
		{"postgres:/db", false, false},
		{"/var/lib/tocsin/tocsin.db", false, false},
		{"tocsin.db", false, false},
		{"sqlite3://x", false, false},
		{" postgres://db/t", false, false},
	}
	for _, c := range cases {
		t.Run(c.url, func(t *testing.T) {
			cfg := valid()
			cfg.DatabaseURL = c.url
			err := cfg.ValidateDatabase()
			if (err == nil) != c.ok {
				t.Errorf("ValidateDatabase(%q) = %v, want ok=%v", c.url, err, c.ok)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "database-url:") {
				t.Errorf("error %q does not name database-url", err)
			}
			if got := cfg.IsPostgres(); got != c.postgres {
				t.Errorf("IsPostgres(%q) = %v, want %v", c.url, got, c.postgres)
			}
		})
	}
	t.Run("needs nothing else", func(t *testing.T) {
		// Admin commands check only the database: the rest may be unset.
		c := config.Config{DatabaseURL: "postgres://db/t"}
		if err := c.ValidateDatabase(); err != nil {
			t.Errorf("ValidateDatabase: %v", err)
		}
	})
}

// TestRedacted: the printed configuration never holds the secret keys or a
// database password, wherever the password is written.
func TestRedacted(t *testing.T) {
	cases := []struct {
		name     string
		mutate   func(*config.Config)
		secrets  []string
		contains []string // what the operator still needs to see
	}{
		{"defaults", func(c *config.Config) {}, nil,
			[]string{"listen=:8080", "database=sqlite:tocsin-data/tocsin.db", "secret-keys=(none", "rate-limit=600/min", "shutdown-timeout=30s"}},
		{"one key", func(c *config.Config) { c.SecretKeys = "k1:" + key1 }, []string{key1, key1[:16], key1[48:]},
			[]string{"secret-keys=(set, 1 keys)"}},
		{"two keys", func(c *config.Config) { c.SecretKeys = "k2:" + key2 + ",k1:" + key1 }, []string{key1, key2, key2[:16]},
			[]string{"(set, 2 keys)"}},
		{"invalid key still hidden", func(c *config.Config) { c.SecretKeys = "oops-" + key1 }, []string{key1[:16]}, nil},
		{"password in the URL", func(c *config.Config) { c.DatabaseURL = "postgres://tocsin:pa55word@db.internal:5432/tocsin" },
			[]string{"pa55word"}, []string{"tocsin:REDACTED@db.internal:5432/tocsin"}},
		{"escaped password in the URL", func(c *config.Config) { c.DatabaseURL = "postgres://tocsin:p%40ss%2Fw0rd@db/tocsin" },
			[]string{"p%40ss%2Fw0rd", "p@ss/w0rd", "p%40ss"}, []string{"db/tocsin"}},
		{"empty password in the URL", func(c *config.Config) { c.DatabaseURL = "postgres://tocsin:@db/tocsin" }, nil, []string{"db/tocsin"}},
		{"user without password", func(c *config.Config) { c.DatabaseURL = "postgres://tocsin@db/tocsin" }, nil, []string{"postgres://tocsin@db/tocsin"}},
		{"password in the query", func(c *config.Config) {
			c.DatabaseURL = "postgres://db/tocsin?user=tocsin&password=qu3ry-s3cret&sslmode=require"
		},
			[]string{"qu3ry-s3cret"}, []string{"sslmode=require", "user=tocsin"}},
		{"password in both", func(c *config.Config) { c.DatabaseURL = "postgres://u:us3r-s3cret@db/t?password=qu3ry-s3cret" },
			[]string{"us3r-s3cret", "qu3ry-s3cret"}, nil},
		{"password repeated in the query", func(c *config.Config) { c.DatabaseURL = "postgres://db/t?password=first-s3cret&password=second-s3cret" },
			[]string{"first-s3cret", "second-s3cret"}, nil},
		{"sslpassword in the query", func(c *config.Config) { c.DatabaseURL = "postgres://db/t?sslmode=verify-full&sslpassword=k3y-s3cret" },
			[]string{"k3y-s3cret"}, nil},
		{"unparseable URL", func(c *config.Config) { c.DatabaseURL = "postgres://u:pa55%zz@db/t" }, []string{"pa55"}, []string{"unparseable"}},
		{"key=value DSN", func(c *config.Config) { c.DatabaseURL = "host=db user=tocsin password=dsn-s3cret" }, []string{"dsn-s3cret"}, nil},
		{"no SMTP", func(c *config.Config) {}, nil, []string{"smtp-url=(none"}},
		{"SMTP password", smtp("smtp://user:sm7p-s3cret@mail.example.com:587", "Tocsin <tocsin@example.com>"),
			[]string{"sm7p-s3cret"}, []string{"smtp-url=smtp://user:***@mail.example.com:587 ", `smtp-from="Tocsin <tocsin@example.com>"`}},
		{"SMTP default port shown", smtp("smtps://user:sm7p-s3cret@mail.example.com", "tocsin@example.com"),
			[]string{"sm7p-s3cret"}, []string{"smtp-url=smtps://user:***@mail.example.com:465 "}},
		{"SMTP escaped password", smtp("smtp://user:sm7p%2Fs3cret%40x@mail.example.com", "tocsin@example.com"),
			[]string{"sm7p", "s3cret"}, []string{"smtp-url=smtp://user:***@mail.example.com:587 "}},
		{"SMTP local relay", smtp("smtp://relay:25?tls=none", "tocsin@example.com"), nil, []string{"smtp-url=smtp://relay:25?tls=none "}},
		{"SMTP invalid URL still hidden", smtp("smtp://user:sm7p-s3cret@mail.example.com:0", "tocsin@example.com"),
			[]string{"sm7p-s3cret"}, []string{"smtp-url=(invalid"}},
		{"SMTP password in the query", smtp("smtp://mail.example.com?password=sm7p-s3cret", "tocsin@example.com"),
			[]string{"sm7p-s3cret"}, nil},
		{"SMTP unparseable URL", smtp("smtp://user:sm7p-s3cret%zz@mail.example.com", "tocsin@example.com"),
			[]string{"sm7p-s3cret"}, []string{"smtp-url=(invalid"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := valid()
			c.mutate(&cfg)
			got := cfg.Redacted()
			for _, s := range c.secrets {
				if strings.Contains(got, s) {
					t.Errorf("Redacted() contains %q:\n%s", s, got)
				}
			}
			for _, s := range c.contains {
				if !strings.Contains(got, s) {
					t.Errorf("Redacted() lacks %q:\n%s", s, got)
				}
			}
		})
	}
}

// sameExported compares the settings, not the raw text kept for messages.
func sameExported(a, b config.Config) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := range va.NumField() {
		if va.Type().Field(i).IsExported() && !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			return false
		}
	}
	return true
}

// TestParseQuotas: quota flags as an operator may mistype them are
// reported by name at start, quoting the value given.
func TestParseQuotas(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // "" = valid
	}{
		{[]string{"--max-monitors", "5000", "--max-heartbeats", "20", "--min-interval", "1m", "--max-channels", "1", "--max-maintenance-windows", "3"}, ""},
		{[]string{"--max-monitors", "lots"}, `max-monitors: "lots" must be a whole number from 1 to 10000000`},
		{[]string{"--max-monitors", "0"}, `max-monitors: "0" must be`},
		{[]string{"--max-heartbeats", "-3"}, `max-heartbeats: "-3" must be`},
		{[]string{"--min-interval", "30"}, `min-interval: "30" must be whole seconds from 10s to`},
		{[]string{"--min-interval", "2s"}, `min-interval: "2s" must be`},
	} {
		cfg := parse(t, c.args, nil)
		err := cfg.Validate()
		if c.want == "" {
			if err != nil {
				t.Errorf("%q rejected: %v", c.args, err)
			}
			continue
		}
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to start with %q", c.args, err, c.want)
		}
	}
}

// TestTrustedProxies: the flag and its variable give the prefixes whose
// forwarding headers are believed; one that does not parse is a start-up
// problem naming the setting and the value.
func TestTrustedProxies(t *testing.T) {
	c := parse(t, nil, nil)
	if c.TrustedProxies.String() != "(none)" {
		t.Errorf("default: %s", c.TrustedProxies)
	}
	c = parse(t, nil, map[string]string{"TOCSIN_TRUSTED_PROXIES": "10.0.0.0/8, fd00::/8"})
	if err := c.Validate(); err != nil || c.TrustedProxies.String() != "10.0.0.0/8,fd00::/8" {
		t.Errorf("from the environment: %s, %v", c.TrustedProxies, err)
	}
	c = parse(t, []string{"--trusted-proxies", "192.168.1.7"}, map[string]string{"TOCSIN_TRUSTED_PROXIES": "10.0.0.0/8"})
	if c.TrustedProxies.String() != "192.168.1.7/32" || !strings.Contains(c.Redacted(), "trusted-proxies=192.168.1.7/32") {
		t.Errorf("the flag wins: %s; %s", c.TrustedProxies, c.Redacted())
	}
	c = parse(t, []string{"--trusted-proxies", "10.0.0.0/8,10.0.0.0/33", "--log-level", "loud"}, nil)
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), `trusted-proxies: "10.0.0.0/33" is not a CIDR prefix`) || !strings.Contains(err.Error(), "log-level") {
		t.Errorf("bad prefix: %v", err)
	}
}
