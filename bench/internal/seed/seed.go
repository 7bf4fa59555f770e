// Package seed writes what a benchmark starts from, and is the only
// package of the bench command that imports the store or the
// application. What the API cannot make (months of state changes, checks
// and rollups, past incidents, status pages, an outbox filled while no
// server runs) is written through the store's and the application's own
// functions with the benchmark's clock, as `tocsin serve` would have
// written it; Many makes what the API can, eight at a time. Target is the
// loopback endpoint seeded monitors check.
package seed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/netguard"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
)

// Day is a day of history.
const Day = 24 * time.Hour

// Monitors is what WriteMonitors writes: Count HTTP monitors of a
// workspace, created at Created, each with the state changes History
// draws from then to Now.
type Monitors struct {
	Workspace    string
	Count        int
	Created, Now time.Time
	Target       string // the URL they check
	Interval     int    // seconds between checks
	Name         func(i int) string
	Quota        int // the workspace's monitor limit, passed to the store
	Rand         *rand.Rand
}

// perTx is how many monitors' state changes one transaction writes.
const perTx = 50

// WriteMonitors writes the monitors, UP now, in the order of their ids,
// and returns their ids and how many state changes it wrote.
func WriteMonitors(ctx context.Context, db *store.DB, o Monitors) (monitors []string, changes int, err error) {
	monitors = make([]string, o.Count)
	hists := make([][]monitor.Transition, o.Count)
	for i := range monitors {
		id := ids.New(ids.Monitor, o.Created.Add(time.Duration(i)*time.Millisecond))
		monitors[i] = id
		hist := History(o.Rand, o.Created, o.Now)
		hists[i] = hist
		last := hist[len(hist)-1]
		m := monitor.Monitor{ID: id, WorkspaceID: o.Workspace, Type: monitor.TypeHTTP, Name: o.Name(i),
			Config: monitor.Config{URL: o.Target, TimeoutSeconds: 10}, IntervalSeconds: o.Interval,
			State: last.To, StateSince: last.At, CreatedAt: o.Created, UpdatedAt: o.Created}
		if err := db.CreateMonitor(ctx, m, store.Sealed{}, o.Quota); err != nil {
			return nil, 0, err
		}
	}
	for start := 0; start < len(monitors); start += perTx {
		end := min(start+perTx, len(monitors))
		err := db.InTx(ctx, func(tx *store.Tx) error {
			for i := start; i < end; i++ {
				for _, tr := range hists[i] {
					if err := tx.AppendStateChange(ctx, monitors[i], tr); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			return nil, 0, err
		}
		for i := start; i < end; i++ {
			changes += len(hists[i])
		}
	}
	return monitors, changes, nil
}

// Span is one kind of trouble a monitor's history holds: how often it
// comes (Weight) and how long it lasts.
type Span struct {
	State    monitor.State
	Weight   int
	Min, Max time.Duration
	Cause    string
}

// Spans are the kinds of trouble History draws from.
var Spans = []Span{
	{monitor.StateDown, 40, 2 * time.Minute, 90 * time.Minute, "status 503, expected 2xx"},
	{monitor.StateDegraded, 30, 10 * time.Minute, 4 * time.Hour, "response time above the threshold"},
	{monitor.StateMaintenance, 15, time.Hour, 3 * time.Hour, "maintenance window began"},
	{monitor.StateUnknown, 15, 5 * time.Minute, 30 * time.Minute, "probe could not run the check"},
}

// MeanGap is the mean time a monitor stays UP between two spans.
const MeanGap = 2 * Day

// History is a monitor's state changes from created to now: PENDING to
// UP at created, then spans of DOWN, DEGRADED, MAINTENANCE and UNKNOWN,
// each back to UP, about every MeanGap (exponentially), the last ended an
// hour before now. It ends UP.
func History(rng *rand.Rand, created, now time.Time) []monitor.Transition {
	out := []monitor.Transition{{From: monitor.StatePending, To: monitor.StateUp, At: created, Cause: "the check passed"}}
	total := 0
	for _, s := range Spans {
		total += s.Weight
	}
	at := created
	for {
		at = at.Add(time.Duration(rng.ExpFloat64() * float64(MeanGap)))
		w := rng.IntN(total)
		s := Spans[0]
		for _, c := range Spans {
			if w < c.Weight {
				s = c
				break
			}
			w -= c.Weight
		}
		d := s.Min + time.Duration(rng.Int64N(int64(s.Max-s.Min)))
		end := at.Add(d)
		if end.After(now.Add(-time.Hour)) {
			return out
		}
		out = append(out,
			monitor.Transition{From: monitor.StateUp, To: s.State, At: at, Cause: s.Cause},
			monitor.Transition{From: s.State, To: monitor.StateUp, At: end, Cause: "the check passed"})
		at = end
	}
}

// Target is the monitors' URL on loopback: it answers every request with
// its status, 200 until Set changes it.
type Target struct {
	URL    string
	status atomic.Int32
	srv    *http.Server
}

// StartTarget serves a Target until Close.
func StartTarget() (*Target, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	t := &Target{URL: "http://" + ln.Addr().String() + "/health"}
	t.status.Store(http.StatusOK)
	t.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(int(t.status.Load()))
		_, _ = w.Write([]byte("ok\n"))
	}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = t.srv.Serve(ln) }()
	return t, nil
}

// Set makes the target answer status from now on.
func (t *Target) Set(status int) { t.status.Store(int32(status)) }

// Close stops serving.
func (t *Target) Close() { _ = t.srv.Close() }

// openApp opens the database at dbURL, migrated, and composes the
// application over it with the keyring, the clock now and cfg, as `tocsin
// serve` composes it.
func openApp(ctx context.Context, dbURL, keyring string, now func() time.Time, cfg app.Config) (*store.DB, *app.App, error) {
	kr, err := secrets.ParseKeyring(keyring)
	if err != nil {
		return nil, nil, err
	}
	db, err := Open(ctx, dbURL)
	if err != nil {
		return nil, nil, err
	}
	return db, app.New(db, kr, now, slog.New(slog.DiscardHandler), cfg), nil
}

// Open opens the database at dbURL through the store and migrates it.
func Open(ctx context.Context, dbURL string) (*store.DB, error) {
	db, err := store.Open(ctx, dbURL)
	if err == nil {
		_, err = db.Migrate(ctx)
	}
	return db, err
}

// Workspace makes a workspace that holds up to quota monitors.
func Workspace(ctx context.Context, db *store.DB, slug string, quota int) (string, error) {
	now := time.Now().UTC().Truncate(time.Microsecond)
	ws := account.Workspace{ID: ids.New(ids.Workspace, now), Name: slug, Slug: slug, MaxMonitors: quota,
		MinIntervalSeconds: monitor.MinIntervalSeconds, CreatedAt: now}
	return ws.ID, db.CreateWorkspace(ctx, ws)
}

// clock is a seeding app's clock: the moment the seeder set (unix ns),
// or the time now while none is set.
type clock struct{ at atomic.Int64 }

func (c *clock) now() time.Time {
	if at := c.at.Load(); at != 0 {
		return time.Unix(0, at).UTC()
	}
	return time.Now()
}

// set sets the clock to t; the zero time sets it going.
func (c *clock) set(t time.Time) {
	var at int64
	if !t.IsZero() {
		at = t.UnixNano()
	}
	c.at.Store(at)
}

// Many runs create(i) for i in [0, n), eight at a time, and logs its
// progress every ten seconds.
func Many(ctx context.Context, n int, logf func(string, ...any), create func(i int) error) error {
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		next = make(chan int)
	)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				if err := create(i); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		})
	}
	last := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if time.Since(last) > 10*time.Second {
			logf("created %d of %d", i, n)
			last = time.Now()
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(append(errs, ctx.Err())...)
}

// CountPings counts the pings stored in the database at dbURL as a new
// server process finds them: on SQLite, with the journal a killed process
// left replayed by the application's rules, as serve replays it.
func CountPings(ctx context.Context, dbURL string) (int64, error) {
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	a := app.New(db, nil, nil, slog.New(slog.DiscardHandler), app.Config{})
	if err := a.FlushPings(ctx); err != nil {
		return 0, err
	}
	return db.CountPings(ctx)
}

// IncidentMessage is every seeded incident's first update.
const IncidentMessage = "We are looking into elevated error rates on the public API."

// Incidents writes, with no server running, channels owners, each in a
// workspace of its own with a webhook channel to hook(i), and n manual
// incidents spread over them in turn: one incident.opened delivery each,
// pending for the server that starts next. It goes through the
// application, as the API would, because the API's server would deliver
// them at once. It returns the channels' signing secrets.
func Incidents(ctx context.Context, dbURL, keyring string, channels, n int, hook func(int) string, logf func(string, ...any)) ([]string, error) {
	db, a, err := openApp(ctx, dbURL, keyring, time.Now, app.Config{Outbound: netguard.Policy{}})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	actors := make([]app.Actor, channels)
	secrets := make([]string, channels)
	err = Many(ctx, channels, logf, func(i int) error {
		u, err := a.CreateUser(ctx, app.UserRequest{Email: fmt.Sprintf("owner%d@bench.test", i),
			Workspace: fmt.Sprintf("bench-%d", i), Role: account.RoleOwner})
		if err != nil {
			return err
		}
		actors[i] = app.Actor{UserID: u.User.ID, WorkspaceID: u.Workspace.ID, Role: account.RoleOwner}
		_, secrets[i], err = a.CreateChannel(ctx, actors[i], app.ChannelDraft{Name: "receiver", Kind: notify.Webhook, Enabled: true,
			Config: notify.Config{URL: hook(i)}})
		return err
	})
	if err != nil {
		return nil, err
	}
	return secrets, Many(ctx, n, logf, func(i int) error {
		_, err := a.CreateIncident(ctx, actors[i%channels], app.IncidentDraft{Title: fmt.Sprintf("Bench incident %06d", i), Message: IncidentMessage})
		return err
	})
}
