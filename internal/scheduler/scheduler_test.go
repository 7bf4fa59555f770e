package scheduler_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/probe"
	"github.com/tocsin/tocsin/internal/scheduler"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

var ctx = context.Background()

func check(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func workspace(t testing.TB, db *store.DB) string {
	t.Helper()
	now := time.Now().UTC()
	w := account.Workspace{ID: ids.New(ids.Workspace, now), Name: "engine", Slug: "engine-" + strings.ToLower(ids.New("x", now)[2:]),
		MaxMonitors: 100000, MinIntervalSeconds: 1, CreatedAt: now}
	check(t, db.CreateWorkspace(ctx, w))
	return w.ID
}

// addMonitor stores an http monitor of target checked every interval; the
// store takes intervals shorter than the API allows, so tests run fast.
func addMonitor(t testing.TB, db *store.DB, ws, target string, interval time.Duration, timeout int) monitor.Monitor {
	t.Helper()
	return addMonitorOf(t, db, ws, monitor.TypeHTTP, monitor.Config{URL: target, TimeoutSeconds: timeout}, interval)
}

// addMonitorOf stores a monitor of any type, which confirms DOWN on two
// down results and recovers on one.
func addMonitorOf(t testing.TB, db *store.DB, ws string, typ monitor.Type, cfg monitor.Config, interval time.Duration) monitor.Monitor {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Microsecond)
	cfg.Confirmations, cfg.Recoveries = 2, 1
	m := monitor.Monitor{ID: ids.New(ids.Monitor, now), WorkspaceID: ws, Type: typ, Name: "m",
		Config: cfg, IntervalSeconds: int(interval / time.Second), State: monitor.StatePending, StateSince: now,
		CreatedAt: now, UpdatedAt: now}
	check(t, db.CreateMonitor(ctx, m, store.Sealed{}, 100000))
	return m
}

// appOf is the application over db, as serve builds it: what the
// scheduler records checks through.
func appOf(db *store.DB) *app.App {
	return app.New(db, nil, nil, slog.New(slog.DiscardHandler), app.Config{})
}

// openDB opens a fresh database with app's workflow on it: what a state
// change writes beyond its row, and a heartbeat's state machine, are app's.
func openDB(t testing.TB, e storetest.Engine) *store.DB {
	t.Helper()
	db := storetest.OpenDB(t, e)
	appOf(db)
	return db
}

// storedApp is the app over which a writer stores observations; it hands
// each batch it stored to the test over stored.
type storedApp struct {
	*app.App
	stored chan []monitor.Completed
}

func (a storedApp) RecordChecks(ctx context.Context, owner string, batch []monitor.Completed) ([]monitor.StateChange, error) {
	changes, err := a.App.RecordChecks(ctx, owner, batch)
	if err == nil {
		select {
		case a.stored <- batch:
		default: // the test has all it waited for and reads no more
		}
	}
	return changes, err
}

func newStored() chan []monitor.Completed { return make(chan []monitor.Completed, 10000) }

// waitStored reads the batches stored until each monitor of need has had
// need[id] stored observations that count, and fails the test, saying
// what it waited for, once timeout has passed.
func waitStored(t testing.TB, stored <-chan []monitor.Completed, timeout time.Duration, what string, need map[string]int, counts func(monitor.Observation) bool) {
	t.Helper()
	left := maps.Clone(need)
	deadline := time.After(timeout)
	for len(left) > 0 {
		select {
		case batch := <-stored:
			for _, c := range batch {
				id := c.Observation.MonitorID
				if _, ok := left[id]; ok && counts(c.Observation) {
					if left[id]--; left[id] <= 0 {
						delete(left, id)
					}
				}
			}
		case <-deadline:
			t.Fatalf("waited %s for %s, in vain: %d monitors short of it", timeout, what, len(left))
		}
	}
}

func start(t testing.TB, o scheduler.Options) (stop func()) {
	t.Helper()
	if o.Checker == nil {
		o.Checker = probe.New(probe.Options{ProbeID: o.Node})
	}
	if o.Poll == 0 {
		o.Poll = 50 * time.Millisecond
	}
	e := scheduler.New(o)
	c, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.Run(c)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	return stop
}

// A target whose health the test switches.
type target struct {
	status atomic.Int32
	hits   atomic.Int64
	*httptest.Server
}

func newTarget(t testing.TB) *target {
	tg := &target{}
	tg.status.Store(200)
	tg.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tg.hits.Add(1)
		w.WriteHeader(int(tg.status.Load()))
	}))
	t.Cleanup(tg.Close)
	return tg
}

func getMonitor(t testing.TB, db *store.DB, m monitor.Monitor) monitor.Monitor {
	t.Helper()
	got, err := db.GetMonitor(ctx, m.WorkspaceID, m.ID)
	check(t, err)
	return got
}

// TestStatesFollowChecks runs real checks of a real server through the
// engine: PENDING → UP; a failing target is DOWN only after two
// consecutive downs; it recovers on the first up; every transition is in
// the state history with its cause, and the monitor shows its last check.
func TestStatesFollowChecks(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := openDB(t, e)
			ws := workspace(t, db)
			tg := newTarget(t)
			m := addMonitor(t, db, ws, tg.URL, time.Second, 1)
			start(t, scheduler.Options{Node: "node-a", App: appOf(db)})

			wait.For(t, 30*time.Second, "UP", func() bool { return getMonitor(t, db, m).State == monitor.StateUp })
			got := getMonitor(t, db, m)
			if got.Last.Result != monitor.ResultUp || got.Last.StatusCode != 200 || got.Last.At.IsZero() {
				t.Fatalf("last check = %+v", got.Last)
			}

			tg.status.Store(503)
			wait.For(t, 30*time.Second, "DOWN", func() bool { return getMonitor(t, db, m).State == monitor.StateDown })
			obs, err := db.ListObservations(ctx, ws, m.ID, store.ObservationQuery{Limit: 100})
			check(t, err)
			// The newest observations: the two downs that confirmed it.
			if len(obs) < 3 || obs[0].Result != monitor.ResultDown || obs[1].Result != monitor.ResultDown {
				t.Fatalf("observations before DOWN: %+v", obs)
			}
			if !strings.Contains(obs[0].Reason, "503") || obs[0].StatusCode != 503 || obs[0].Probe != "node-a" {
				t.Fatalf("down observation = %+v", obs[0])
			}

			tg.status.Store(200)
			wait.For(t, 30*time.Second, "UP again", func() bool { return getMonitor(t, db, m).State == monitor.StateUp })

			hist, err := db.ListStateChanges(ctx, ws, m.ID, time.Time{}, 10)
			check(t, err)
			var path []string
			for _, tr := range slices.Backward(hist) {
				path = append(path, fmt.Sprintf("%s→%s", tr.From, tr.To))
			}
			want := []string{"PENDING→UP", "UP→DOWN", "DOWN→UP"}
			if !slices.Equal(path, want) {
				t.Fatalf("state history = %v, want %v", path, want)
			}
			if hist[1].Cause != "status 503 not in 200-399 (after 2 consecutive failed checks)" {
				t.Fatalf("cause of DOWN = %q", hist[1].Cause)
			}
			if hist[0].Cause != "checks pass again (after 1 passing check)" {
				t.Fatalf("cause of the recovery = %q", hist[0].Cause)
			}
		})
	}
}

// TestTwoSchedulersCheckEachSlotOnce runs two engines on one database: 500
// monitors, every slot of every monitor checked exactly once, none missed.
func TestTwoSchedulersCheckEachSlotOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for several seconds")
	}
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			// Each node has its own connection pool, as two processes would.
			u := storetest.URL(t, e)
			db := storetest.Open(t, u)
			db2 := storetest.Open(t, u)
			ws := workspace(t, db)
			tg := newTarget(t)
			// Timeouts as long as the interval, so a check is a missed start
			// only when a whole slot went by: a loaded CI machine running
			// other tests beside this one may delay a start, and that is not
			// what this test is about (TestMissedStartIsUnknown is).
			// 500 monitors on PostgreSQL, the several-node engine. SQLite is for
			// one node; its compare-and-set claims are shown with fewer, so two
			// processes' writers queueing on one file under the race detector
			// do not turn the test into a load test.
			n := 500
			if e.Name == store.EngineSQLite {
				n = 150
			}
			interval := 3 * time.Second
			ms := make([]monitor.Monitor, n)
			for i := range ms {
				ms[i] = addMonitor(t, db, ws, tg.URL, interval, 3)
			}
			began := time.Now()
			stored := newStored()
			stopA := start(t, scheduler.Options{Node: "node-a", App: storedApp{appOf(db), stored}})
			stopB := start(t, scheduler.Options{Node: "node-b", App: storedApp{appOf(db2), stored}})
			need := map[string]int{}
			for _, m := range ms {
				need[m.ID] = 3
			}
			waitStored(t, stored, time.Minute, "three slots of each monitor after the start", need, func(o monitor.Observation) bool {
				return !o.Due.Before(began.Add(time.Second))
			})
			stopA()
			stopB()

			byNode := map[string]int{}
			total, requested, cancelled := 0, 0, 0
			for _, m := range ms {
				// Slots due before the engines ran are unknown (missed start); the
				// ones that count came after.
				all, err := db.ListObservations(ctx, ws, m.ID, store.ObservationQuery{Limit: 100})
				check(t, err)
				var obs []monitor.Observation
				for _, o := range all {
					switch {
					case o.Result == monitor.ResultUp:
						requested++
					case o.Reason == monitor.ReasonShuttingDown:
						cancelled++ // in flight when the engines stopped
					}
					if !o.Due.Before(began.Add(time.Second)) {
						obs = append(obs, o)
					}
				}
				slots := map[time.Time]bool{}
				for _, o := range obs {
					if o.Result != monitor.ResultUp && o.Reason != monitor.ReasonShuttingDown {
						t.Fatalf("%s: %s observation: %s", m.ID, o.Result, o.Reason)
					}
					if slots[o.Due] {
						t.Fatalf("%s: slot %v checked twice", m.ID, o.Due)
					}
					slots[o.Due] = true
					byNode[o.Probe]++
				}
				// Every slot from the first to the last is there.
				for i := 1; i < len(obs); i++ {
					if gap := obs[i-1].Due.Sub(obs[i].Due); gap != interval {
						t.Fatalf("%s: slots %v and %v are %v apart; a slot was missed", m.ID, obs[i].Due, obs[i-1].Due, gap)
					}
				}
				if len(obs) < 3 {
					t.Fatalf("%s: %d checks in %v at a %v interval", m.ID, len(obs), time.Since(began), interval)
				}
				total += len(obs)
			}
			t.Logf("%d checks of %d monitors; by node: %v; target saw %d requests", total, n, byNode, tg.hits.Load())
			// Every request the target saw is stored; none was made twice.
			if hits := int(tg.hits.Load()); hits < requested || hits > requested+cancelled {
				t.Fatalf("stored %d up observations (and %d cancelled at stop), but the target saw %d requests", requested, cancelled, hits)
			}
			if e.Name == store.EnginePostgres && (byNode["node-a"] == 0 || byNode["node-b"] == 0) {
				t.Fatalf("one node did all the work: %v", byNode)
			}
		})
	}
}

func observations(t testing.TB, db *store.DB, m monitor.Monitor) []monitor.Observation {
	t.Helper()
	obs, err := db.ListObservations(ctx, m.WorkspaceID, m.ID, store.ObservationQuery{Limit: 100})
	check(t, err)
	return obs
}

// TestDeadNodesChecksAreTakenOver: a node claims checks and dies; once its
// leases lapse another node runs them.
func TestDeadNodesChecksAreTakenOver(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := openDB(t, e)
			ws := workspace(t, db)
			tg := newTarget(t)
			m := addMonitor(t, db, ws, tg.URL, 10*time.Second, 5)
			storetest.SetNextDue(t, db, m.ID, time.Now().Add(100*time.Millisecond))
			// The dead node claims the first slot (looking far ahead) with a
			// short lease, and never reports back.
			now := time.Now()
			claimed, err := db.ClaimDue(ctx, "dead-node", now, now.Add(time.Minute), 2*time.Second, 10)
			check(t, err)
			if len(claimed) != 1 {
				t.Fatalf("dead node claimed %d checks", len(claimed))
			}
			// While the lease holds, nobody else may take it.
			again, err := db.ClaimDue(ctx, "node-b", now, now.Add(time.Minute), time.Minute, 10)
			check(t, err)
			if len(again) != 0 {
				t.Fatalf("a held check was claimed twice")
			}
			start(t, scheduler.Options{Node: "node-b", App: appOf(db), Lookahead: time.Minute})
			wait.For(t, 30*time.Second, "node-b to check the monitor", func() bool { return len(observations(t, db, m)) > 0 })
			o := observations(t, db, m)[0]
			if o.Probe != "node-b" || !o.Due.Equal(claimed[0].Due) {
				t.Fatalf("observation %+v; want node-b running the slot %v", o, claimed[0].Due)
			}
		})
	}
}

// TestShutdownCancelsChecksAsUnknown: a check in flight when the process
// stops is recorded as unknown — never down — and the monitor stays as it
// was.
func TestShutdownCancelsChecksAsUnknown(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := openDB(t, e)
			ws := workspace(t, db)
			entered := make(chan struct{}, 1)
			release := make(chan struct{})
			slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case entered <- struct{}{}:
				default:
				}
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}))
			t.Cleanup(slow.Close)
			t.Cleanup(func() { close(release) })
			m := addMonitor(t, db, ws, slow.URL, 10*time.Second, 9)
			storetest.SetNextDue(t, db, m.ID, time.Now().Add(100*time.Millisecond))
			stop := start(t, scheduler.Options{Node: "node-a", App: appOf(db), Lookahead: time.Minute})
			<-entered
			stop()
			obs := observations(t, db, m)
			if len(obs) != 1 || obs[0].Result != monitor.ResultUnknown || obs[0].Reason != monitor.ReasonShuttingDown {
				t.Fatalf("observations after shutdown: %+v", obs)
			}
			if s := getMonitor(t, db, m).State; s != monitor.StatePending {
				t.Fatalf("state after a cancelled check = %s, want PENDING", s)
			}
		})
	}
}

// TestMissedStartIsUnknown: with every check slot busy, a check that cannot
// start before its deadline is recorded as unknown, not run late.
func TestMissedStartIsUnknown(t *testing.T) {
	db := storetest.OpenDB(t, storetest.Engines(t)[0])
	ws := workspace(t, db)
	holding := make(chan struct{}, 1)
	blocker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case holding <- struct{}{}:
		default:
		}
		<-r.Context().Done() // never answers: the check times out
	}))
	t.Cleanup(blocker.Close)
	tg := newTarget(t)
	// One check slot. a takes it and holds it for its 4 s timeout. b is
	// made due only once a is holding the slot, with a 1 s timeout: it
	// cannot start before its deadline, however late the engine claims
	// or starts either check (when both were due up front, a claim that
	// came after b's due time under load started them together, and b
	// could win the slot).
	// b checks daily: after the missed slot, its next one must not come
	// round while a still holds the slot (at 10 s it did, in about one run
	// in five, and b's newest observation was up).
	a := addMonitor(t, db, ws, blocker.URL, 10*time.Second, 4)
	b := addMonitor(t, db, ws, tg.URL, 24*time.Hour, 1)
	storetest.SetNextDue(t, db, a.ID, time.Now())
	storetest.SetNextDue(t, db, b.ID, time.Now().Add(time.Hour)) // beyond the lookahead: not claimed yet
	start(t, scheduler.Options{Node: "node-a", App: appOf(db), Concurrency: 1, Lookahead: time.Minute})
	select {
	case <-holding:
	case <-time.After(30 * time.Second):
		t.Fatal("a's check never reached its target")
	}
	storetest.SetNextDue(t, db, b.ID, time.Now().Add(200*time.Millisecond))
	wait.For(t, 30*time.Second, "both checks", func() bool { return len(observations(t, db, a)) > 0 && len(observations(t, db, b)) > 0 })
	results := map[monitor.Result]string{}
	for _, m := range []monitor.Monitor{a, b} {
		o := observations(t, db, m)[0]
		results[o.Result] = o.Reason
	}
	// a timed out (down); b missed its start (unknown), and was never run.
	if results[monitor.ResultDown] == "" || results[monitor.ResultUnknown] != monitor.ReasonMissedStart || tg.hits.Load() != 0 {
		t.Fatalf("results = %v", results)
	}
}

// TestSilentMonitorBecomesUnknown: no known result for two intervals,
// though its checks ran, makes a monitor UNKNOWN, with the cause stored. A
// monitor no node checked at all stays as it was: the check that ends
// that gap records it (app's TestNodeGap).
func TestSilentMonitorBecomesUnknown(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := openDB(t, e)
			ws := workspace(t, db)
			m := addMonitor(t, db, ws, "http://127.0.0.1:1/", 30*time.Second, 5)
			a := appOf(db)
			// One check ran, and could not tell.
			at := m.CreatedAt.Add(30 * time.Second)
			due, err := db.ClaimDue(ctx, "node", at, at, time.Minute, 10)
			check(t, err)
			if len(due) != 1 {
				t.Fatalf("claimed %d checks, want the monitor's first", len(due))
			}
			_, err = a.RecordChecks(ctx, "node", []monitor.Completed{{Seq: due[0].Seq, Observation: monitor.Observation{
				MonitorID: m.ID, StartedAt: at, Due: due[0].Due, Result: monitor.ResultUnknown, Reason: "probe broken", Probe: "p", Region: "r"}}})
			check(t, err)
			never := addMonitor(t, db, ws, "http://127.0.0.1:1/", 30*time.Second, 5)
			changes, err := a.SweepStale(ctx, m.CreatedAt.Add(59*time.Second))
			check(t, err)
			if len(changes) != 0 {
				t.Fatalf("swept after one interval and a half: %+v", changes)
			}
			changes, err = a.SweepStale(ctx, m.CreatedAt.Add(60*time.Second))
			check(t, err)
			if len(changes) != 1 || changes[0].To != monitor.StateUnknown || changes[0].From != monitor.StatePending {
				t.Fatalf("changes after two intervals: %+v", changes)
			}
			if s := getMonitor(t, db, m).State; s != monitor.StateUnknown {
				t.Fatalf("state = %s", s)
			}
			changes, err = a.SweepStale(ctx, never.CreatedAt.Add(2*time.Minute))
			check(t, err)
			if s := getMonitor(t, db, never).State; len(changes) != 0 || s != monitor.StatePending {
				t.Fatalf("a monitor never checked went %s: %+v", s, changes)
			}
			hist, err := db.ListStateChanges(ctx, ws, m.ID, time.Time{}, 10)
			check(t, err)
			if len(hist) != 1 || !strings.HasPrefix(hist[0].Cause, "no known result for") {
				t.Fatalf("history = %+v", hist)
			}
		})
	}
}

// TestSlowTargetDelaysNoOther: a target that hangs holds only its own
// check; the others due at the same time are checked and stored while it
// still hangs.
func TestSlowTargetDelaysNoOther(t *testing.T) {
	db := storetest.OpenDB(t, storetest.Engines(t)[0])
	ws := workspace(t, db)
	release := make(chan struct{})
	hanging := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hanging.Close)
	defer close(release)
	tg := newTarget(t)
	due := time.Now().Add(200 * time.Millisecond)
	slow := addMonitor(t, db, ws, hanging.URL, 30*time.Second, 20)
	storetest.SetNextDue(t, db, slow.ID, due)
	var fast []monitor.Monitor
	for range 20 {
		m := addMonitor(t, db, ws, tg.URL, 30*time.Second, 20)
		storetest.SetNextDue(t, db, m.ID, due)
		fast = append(fast, m)
	}
	start(t, scheduler.Options{Node: "node-a", App: appOf(db), Lookahead: time.Minute})
	wait.For(t, 30*time.Second, "the fast monitors", func() bool {
		for _, m := range fast {
			if len(observations(t, db, m)) == 0 {
				return false
			}
		}
		return true
	})
	if n := len(observations(t, db, slow)); n != 0 {
		t.Fatalf("the hanging check finished early: %d observations", n)
	}
}
