// Package app holds the use cases shared by the API, the web app and the
// background runners: authorization, validation, and the workflows behind
// them (recording checks and pings, what a state change writes, incidents,
// the outbox and its storm hold, the sweeps), run over the store's
// transaction primitives. Every use case a person starts takes the acting
// principal explicitly and checks it through Actor.Require, so there is one
// authorization path whatever the caller.
package app

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/netguard"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/ratelimit"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
)

// Config tunes the use cases; zero values take the documented defaults.
type Config struct {
	// RatePerMinute is the request budget of one API key (spec §8: 600).
	RatePerMinute int
	// IdempotencyTTL is how long a stored response is replayed (spec §8: 24h).
	IdempotencyTTL time.Duration
	// The server's quotas, for every workspace without an override of its
	// own (`tocsin workspace set-quota`): monitors (default 1000),
	// heartbeats (default DefaultMaxMonitors), the shortest check interval
	// (default 10 s), maintenance windows and notification channels
	// (default 100 each).
	DefaultMaxMonitors           int
	DefaultMaxHeartbeats         int
	DefaultMinIntervalSeconds    int
	DefaultMaxMaintenanceWindows int
	DefaultMaxChannels           int
	// DefaultMaxStatusPages bounds each workspace's status pages (default
	// MaxStatusPages); a workspace's override is its quota_status_pages.
	DefaultMaxStatusPages int
	// Outbound is where checks may connect; it also vets targets written as
	// addresses when a monitor is saved.
	Outbound netguard.Policy
	// Checker runs POST /monitors/test; nil on a node that runs no checks.
	Checker Checker
	// RetentionDays is how long raw observations and pings are kept
	// (default 30), once rolled up; HourlyRetentionDays and
	// DailyRetentionDays how long their hourly (default 90) and daily
	// (default 400) rollups are. Each is at least the one before it.
	RetentionDays, HourlyRetentionDays, DailyRetentionDays int
	// PingWait is the longest a ping waits to be stored (default PingWait).
	PingWait time.Duration
	// EmailEnabled says an SMTP server is configured, so e-mail channels
	// can be made.
	EmailEnabled bool
	// RetryFirst and RetryMax shape a failed delivery's backoff (defaults
	// notify.FirstRetry and notify.MaxRetryDelay; tests shorten them).
	RetryFirst, RetryMax time.Duration
	// The price of metrics answers (metrics_budget.go): the points one
	// response may hold (default MetricsPointsPerResponse), the points an
	// API key may spend a minute (default MetricsPointsPerMinute), and the
	// heavy metrics queries this node runs at once (default half its
	// CPUs, at least 1), which a query waits for at most HeavyMetricsWait
	// (default 10 s).
	MetricsPointsPerResponse, MetricsPointsPerMinute int
	HeavyMetricsQueries                              int
	HeavyMetricsWait                                 time.Duration
}

func (c *Config) defaults() {
	if c.RatePerMinute == 0 {
		c.RatePerMinute = 600
	}
	if c.IdempotencyTTL == 0 {
		c.IdempotencyTTL = 24 * time.Hour
	}
	if c.DefaultMaxMonitors == 0 {
		c.DefaultMaxMonitors = 1000
	}
	if c.RetentionDays == 0 {
		c.RetentionDays = 30
	}
	if c.HourlyRetentionDays == 0 {
		c.HourlyRetentionDays = max(90, c.RetentionDays)
	}
	if c.DailyRetentionDays == 0 {
		c.DailyRetentionDays = max(400, c.HourlyRetentionDays)
	}
	if c.PingWait == 0 {
		c.PingWait = PingWait
	}
	if c.RetryFirst == 0 {
		c.RetryFirst = notify.FirstRetry
	}
	if c.RetryMax == 0 {
		c.RetryMax = notify.MaxRetryDelay
	}
	if c.DefaultMinIntervalSeconds == 0 {
		c.DefaultMinIntervalSeconds = monitor.MinIntervalSeconds
	}
	if c.DefaultMaxHeartbeats == 0 {
		c.DefaultMaxHeartbeats = c.DefaultMaxMonitors
	}
	if c.DefaultMaxMaintenanceWindows == 0 {
		c.DefaultMaxMaintenanceWindows = MaxMaintenanceWindows
	}
	if c.DefaultMaxChannels == 0 {
		c.DefaultMaxChannels = MaxChannels
	}
	if c.DefaultMaxStatusPages == 0 {
		c.DefaultMaxStatusPages = MaxStatusPages
	}
	c.metricsDefaults()
}

// App is the set of use cases over one store.
type App struct {
	store *store.DB
	keys  *secrets.Keyring
	now   func() time.Time
	log   *slog.Logger
	cfg   Config

	// touched remembers when each key's last-used time was last written, so
	// a busy key costs one write a minute, not one per request.
	touched sync.Map // key id → time.Time

	// flow is the workflow of recorded changes (record.go).
	flow workflow
	// steps are app's decisions on pings (record.go), handed to the store
	// with each call that stages or applies them.
	steps *store.PingSteps

	// rates are the API keys' rate-limit buckets (ratelimit.go).
	rates       rateBuckets
	pings       pinger
	pingLimits  *ratelimit.Memory
	knownTokens tokenSet

	// rollupsPurged is the UTC day (unix µs) whose expired rollups
	// Housekeeping last deleted.
	rollupsPurged atomic.Int64

	// stateReads counts WorkspaceStates calls (live.go), overviews' too.
	stateReads atomic.Int64

	// overviews keeps the availability of recent workspace overviews
	// (overview.go).
	overviews overviewCache

	// pagesChanged moves on whenever this process changes what a public
	// page is made of (StatusPagesChanged).
	pagesChanged atomic.Uint64

	// heavy holds a token for each heavy metrics query running on this
	// node (metrics_budget.go).
	heavy chan struct{}
}

// New wires the use cases. now is the clock; tests freeze it. Times are
// kept to the microsecond, the precision both databases store.
func New(db *store.DB, keys *secrets.Keyring, now func() time.Time, log *slog.Logger, cfg Config) *App {
	cfg.defaults()
	if now == nil {
		now = time.Now
	}
	a := &App{store: db, keys: keys, now: func() time.Time { return now().UTC().Truncate(time.Microsecond) }, log: log, cfg: cfg,
		rates: newRateBuckets(db), pingLimits: ratelimit.New(), heavy: make(chan struct{}, cfg.HeavyMetricsQueries)}
	a.pings.lanes = newLanes(db.PingWriters())
	a.flow = workflow{now: a.now, plans: &planCache{}}
	a.steps = a.flow.pingSteps()
	return a
}

// Now is the application clock.
func (a *App) Now() time.Time { return a.now() }

// Config returns the effective configuration.
func (a *App) Config() Config { return a.cfg }

// SpanRetention is how long service spans are kept: they say whether a
// deadline fell in an outage, back to a heartbeat's last ping, so longer
// than the longest heartbeat period plus grace.
const SpanRetention = 2 * 366 * 24 * time.Hour

// Housekeeping forgets what no longer matters: idempotency records past
// their 24 hours, rate-limit buckets that are full again, ended web
// sessions, observations,
// events with their deliveries, and pings past the retention (observations
// and pings only once rolled up), rollups past theirs, and ping keys past
// their 24 hours.
// Deleting is idempotent, so every node may run it.
func (a *App) Housekeeping(ctx context.Context) error {
	now := a.now()
	if _, err := a.store.PurgeIdempotency(ctx, now); err != nil {
		return err
	}
	if _, err := a.rates.purge(ctx, now); err != nil {
		return err
	}
	if _, err := a.store.DeleteExpiredSessions(ctx, now.Add(-SessionIdle), now.Add(-SessionLife)); err != nil {
		return err
	}
	cutoff := now.AddDate(0, 0, -a.cfg.RetentionDays)
	// Raw observations and pings go only once rolled up (a zero time, a
	// rollup never run, keeps them all).
	progress, err := a.store.RollupProgress(ctx)
	if err != nil {
		return err
	}
	if _, err := a.store.DeleteObservationsBefore(ctx, earliest(cutoff, progress[rollupObservationsHour])); err != nil {
		return err
	}
	if _, err := a.store.DeleteEventsBefore(ctx, cutoff); err != nil {
		return err
	}
	// Rollups expire by whole UTC days: once a day is enough.
	if day := now.Truncate(24 * time.Hour); day.UnixMicro() != a.rollupsPurged.Load() {
		for _, tier := range []struct{ tier, days int }{{store.TierHour, a.cfg.HourlyRetentionDays}, {store.TierDay, a.cfg.DailyRetentionDays}} {
			if err := a.store.DeleteRollupsBefore(ctx, tier.tier, day.AddDate(0, 0, -tier.days)); err != nil {
				return err
			}
		}
		a.rollupsPurged.Store(day.UnixMicro())
	}
	return a.store.DeletePingsBefore(ctx, earliest(cutoff, progress[rollupPingsHour]), now.Add(-heartbeat.KeyTTL), now.Add(-SpanRetention))
}
