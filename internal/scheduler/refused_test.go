package scheduler_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/scheduler"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// The database refuses a row for what it carries (bytes a text column does
// not take, a constraint); the writer stores every other row of the batch
// and isolates that one, rather than retrying the batch for ever while
// every other workspace's checks wait behind it.

// countingApp counts the transactions the writer asks of a real app.
type countingApp struct {
	*app.App
	applies atomic.Int64
}

func (a *countingApp) RecordChecks(ctx context.Context, owner string, batch []monitor.Completed) ([]monitor.StateChange, error) {
	a.applies.Add(1)
	return a.App.RecordChecks(ctx, owner, batch)
}

// rawDB opens the test's database beside the store, for what the store
// offers no way to do: adding a trigger.
func rawDB(t *testing.T, u string) *sql.DB {
	t.Helper()
	driver, dsn := "pgx", u
	if rest, ok := strings.CutPrefix(u, "sqlite:"); ok {
		driver, dsn = "sqlite", rest+"?_pragma=busy_timeout(10000)"
	}
	raw, err := sql.Open(driver, dsn)
	check(t, err)
	t.Cleanup(func() { raw.Close() })
	return raw
}

// refuseNUL makes SQLite refuse an observation whose reason holds NUL, as
// PostgreSQL refuses it by itself (SQLSTATE 22021).
func refuseNUL(t *testing.T, e storetest.Engine, raw *sql.DB) {
	t.Helper()
	if e.Name != store.EngineSQLite {
		return
	}
	_, err := raw.ExecContext(ctx, `CREATE TRIGGER refuse_nul BEFORE INSERT ON observations
		WHEN instr(CAST(NEW.reason AS BLOB), x'00') > 0
		BEGIN SELECT RAISE(ABORT, 'NUL in a text column'); END`)
	check(t, err)
}

// refuseMonitor makes the database refuse every observation of seq, by a
// constraint trigger on either engine.
func refuseMonitor(t *testing.T, e storetest.Engine, raw *sql.DB, seq int64) {
	t.Helper()
	stmts := []string{fmt.Sprintf(`CREATE TRIGGER refuse_seq BEFORE INSERT ON observations
		WHEN NEW.monitor_seq = %d BEGIN SELECT RAISE(ABORT, 'refused'); END`, seq)}
	if e.Name == store.EnginePostgres {
		stmts = []string{`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS
			$$ BEGIN RAISE EXCEPTION 'refused' USING ERRCODE = 'check_violation'; END $$`,
			fmt.Sprintf(`CREATE TRIGGER refuse_seq BEFORE INSERT ON observations FOR EACH ROW
			WHEN (NEW.monitor_seq = %d) EXECUTE FUNCTION refuse()`, seq)}
	}
	for _, s := range stmts {
		_, err := raw.ExecContext(ctx, s)
		check(t, err)
	}
}

// claimed makes n monitors and claims a check of each, as the scheduler
// would; it returns the claims in seq order.
func claimed(t *testing.T, db *store.DB, n int) []monitor.DueCheck {
	t.Helper()
	ws := workspace(t, db)
	for range n {
		addMonitor(t, db, ws, "http://127.0.0.1:1/", time.Minute, 5)
	}
	now := time.Now()
	due, err := db.ClaimDue(ctx, "node", now, now.Add(2*time.Minute), 5*time.Minute, n)
	check(t, err)
	if len(due) != n {
		t.Fatalf("claimed %d of %d checks", len(due), n)
	}
	return due
}

// finished is an up check of each claim, as the probe reports it.
func finished(due []monitor.DueCheck) []monitor.Completed {
	out := make([]monitor.Completed, len(due))
	for i, d := range due {
		out[i] = monitor.Completed{Seq: d.Seq, Observation: monitor.Observation{MonitorID: d.Monitor.ID,
			StartedAt: d.Due, Due: d.Due, Result: monitor.ResultUp, Latency: time.Millisecond,
			Probe: "node", Region: "local"}}
	}
	return out
}

// write runs the writer on batch and fails the test if it does not come
// back: a writer that retries a refused batch never does.
func write(t *testing.T, st scheduler.App, m *scheduler.Metrics, batch []monitor.Completed) string {
	t.Helper()
	var log bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		scheduler.WriteForTest(st, "node", slog.New(slog.NewTextHandler(&log, nil)), m, batch)
	}()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("the writer is still retrying a batch the database refuses")
	}
	return log.String()
}

func metric(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	check(t, err)
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestWriterIsolatesARefusedObservation: one observation among 200 carries
// bytes the database refuses (the probe cleans them, this one bypasses
// it). The other 199 are stored as they were, the refused one as unknown
// with a reason that names none of its bytes, in a few more transactions
// than one: the batch is halved down to the row, not retried.
func TestWriterIsolatesARefusedObservation(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			u := storetest.URL(t, e)
			db := storetest.Open(t, u)
			refuseNUL(t, e, rawDB(t, u))
			const n, bad = 200, 137
			due := claimed(t, db, n)
			batch := finished(due)
			batch[bad].Observation.Result = monitor.ResultDown
			batch[bad].Observation.Reason = "DNS: expected TXT value \"ok\" not among the answers (got ok\x00\xff)"

			reg := prometheus.NewRegistry()
			st := &countingApp{App: appOf(db)}
			log := write(t, st, scheduler.NewMetrics(reg), batch)

			for i, d := range due {
				obs := observations(t, db, d.Monitor)
				if len(obs) != 1 {
					t.Fatalf("monitor %d: %d observations stored, want 1", i, len(obs))
				}
				want := monitor.ResultUp
				if i == bad {
					want = monitor.ResultUnknown
					if obs[0].Reason != scheduler.ReasonUnstorable || obs[0].Probe != "node" || !obs[0].Due.Equal(d.Due) {
						t.Fatalf("refused observation stored as %+v", obs[0])
					}
				}
				if obs[0].Result != want {
					t.Fatalf("monitor %d: %s observation (%q), want %s", i, obs[0].Result, obs[0].Reason, want)
				}
			}
			// One try of the whole, two per halving down to the row, one for
			// the unknown in its place.
			if limit := 2 + 2*int64(math.Ceil(math.Log2(n))); st.applies.Load() > limit {
				t.Fatalf("%d transactions for one refused row among %d, want at most %d", st.applies.Load(), n, limit)
			}
			if got := metric(t, reg, "tocsin_observations_refused_total"); got != 1 {
				t.Fatalf("refused = %v, want 1", got)
			}
			if got := metric(t, reg, "tocsin_observations_dropped_total"); got != 0 {
				t.Fatalf("dropped = %v, want 0", got)
			}
			if strings.Contains(log, "will retry") || strings.Count(log, "level=WARN") != 1 {
				t.Fatalf("log:\n%s", log)
			}
		})
	}
}

// TestWriterDropsAnObservationRefusedEvenAsUnknown: the database refuses
// every row of one monitor. Its observation is dropped with one ERROR and
// a count; the others are stored.
func TestWriterDropsAnObservationRefusedEvenAsUnknown(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			u := storetest.URL(t, e)
			db := storetest.Open(t, u)
			const n, bad = 10, 3
			due := claimed(t, db, n)
			refuseMonitor(t, e, rawDB(t, u), due[bad].Seq)

			reg := prometheus.NewRegistry()
			log := write(t, appOf(db), scheduler.NewMetrics(reg), finished(due))

			for i, d := range due {
				obs := observations(t, db, d.Monitor)
				switch {
				case i == bad && len(obs) != 0:
					t.Fatalf("the refused monitor has observations: %+v", obs)
				case i != bad && (len(obs) != 1 || obs[0].Result != monitor.ResultUp):
					t.Fatalf("monitor %d: observations %+v, want one up", i, obs)
				}
			}
			if got := metric(t, reg, "tocsin_observations_dropped_total"); got != 1 {
				t.Fatalf("dropped = %v, want 1", got)
			}
			if strings.Count(log, "level=ERROR") != 1 || !strings.Contains(log, "observation dropped") || !strings.Contains(log, due[bad].Monitor.ID) {
				t.Fatalf("log:\n%s", log)
			}
		})
	}
}
