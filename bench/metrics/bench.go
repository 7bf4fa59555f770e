package metrics

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/child"
	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/secrets"
)

// bench owns the work directory, the server and the databases of a run.
type bench struct {
	c   config
	log io.Writer
	*session.Session
	srv *child.Process
}

// engineResult is what was measured on one engine.
type engineResult struct {
	engine   string
	loadavg  string // the machine's load average before the engine's run
	fixture  fixture
	seedRaw  time.Duration
	rollYear rollupRun // the year monitor alone
	rollDay  rollupRun // every monitor's raw days
	// Bytes: the raw observations as written (before housekeeping), and
	// what each tier of the other monitors' rollups added to the table.
	rawBytes, rawRows     int64
	hourBytes, dayBytes   int64
	hourRows, dayRows     int64
	hourSketch, daySketch float64 // mean bytes of a row's latency summary
	rollupDays            float64 // days of rollups written per monitor
	housekeeping          time.Duration
	seedRollups           time.Duration
	queries               []*query
	load                  load
	serverRSS             int64
	finalRaw, finalRolls  int64 // bytes of observations and rollups when measured
}

func (b *bench) close() {
	if b.srv != nil {
		b.srv.Stop(30 * time.Second)
	}
	if b.Session != nil {
		b.Session.Close()
	}
}

func (b *bench) run(ctx context.Context) ([]*engineResult, error) {
	var err error
	b.Session, err = session.Open(ctx, session.Options{Name: "metrics", Log: b.log, Tocsin: b.c.tocsin, Keep: b.c.keep})
	if err != nil {
		return nil, err
	}
	var out []*engineResult
	for _, e := range b.c.engines {
		res, err := b.runEngine(ctx, e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e, err)
		}
		out = append(out, res)
	}
	return out, nil
}

func (b *bench) runEngine(ctx context.Context, engine string) (*engineResult, error) {
	res := &engineResult{engine: engine, loadavg: loadAverage()}
	if err := os.MkdirAll(filepath.Join(b.Dir, engine), 0o755); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(b.Dir, "sqlite"), 0o755); err != nil {
		return nil, err
	}
	dbURL, drop, err := b.freshDatabase(ctx, engine)
	if err != nil {
		return nil, err
	}
	defer drop()
	keys, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		return nil, err
	}
	if res.fixture, err = b.prepare(ctx, engine, dbURL, keys, res); err != nil {
		return nil, err
	}
	raw, err := openRaw(engine, dbURL)
	if err != nil {
		return nil, err
	}
	defer raw.Close()

	// As an operator runs it: the keyring in the environment, the
	// database and the default retention on the command line.
	b.srv, err = b.Bin.Serve(ctx, b.Dir, "tocsin-"+engine, []string{"TOCSIN_SECRET_KEYS=" + keys},
		"--data-dir", filepath.Join(b.Dir, engine), "--database-url", dbURL, "--rate-limit", "1000000",
		// The queries are timed back to back, far past a key's metrics budget.
		"--metrics-points-per-minute", "100000000",
		"--observation-retention-days", "30", "--hourly-rollup-retention-days", "90", "--daily-rollup-retention-days", "400")
	if err != nil {
		return nil, err
	}
	defer func() { b.srv.Stop(30 * time.Second); b.srv = nil }()
	b.Logf("%s: tocsin serve at %s (pid %d); waiting for its rollups to have nothing to do", engine, b.srv.Base, b.srv.Pid())
	if err := b.waitRollups(ctx, raw); err != nil {
		return nil, err
	}
	res.queries = newQueries(res.fixture)
	b.Logf("%s: %d warm-up and %d measured answers per query, %d queries", engine, b.c.warmup, b.c.reps, len(res.queries))
	if res.load, err = b.measure(ctx, b.srv.Base, res.fixture.key, res.queries, b.srv.Pid(), raw); err != nil {
		return nil, err
	}
	for _, q := range res.queries {
		b.Logf("%s: %-30s median %-9s p90 %-9s %7d bytes, %d checks", engine, q.name, figure.Dur(q.percentile(0.5)),
			figure.Dur(q.percentile(0.9)), q.bytes, q.checks)
	}
	res.serverRSS = host.PeakRSS(b.srv.Pid())
	if res.finalRaw, _, err = raw.tableBytes(ctx, "observations"); err != nil {
		return nil, err
	}
	if res.finalRolls, _, err = raw.tableBytes(ctx, "observation_rollups"); err != nil {
		return nil, err
	}
	return res, nil
}

// loadAverage is the machine's load average over 1, 5 and 15 minutes.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

func selfPID() int { return os.Getpid() }
