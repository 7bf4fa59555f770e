package app

// Outages count from the first failed check (DESIGN §7): a confirmed
// outage's DOWN begins at the first failed check of the streak that
// confirmed it, a recovery at the first passing check of its streak, and
// never before the state they follow began; the alert, the events' times
// and the deliveries' retries follow the confirmation.

import (
	"encoding/json"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// downtimeEnv is an app on the injected clock now, with a workspace
// whose monitors may be checked every 10 s (the API's shortest interval)
// and a channel that hears everything.
type downtimeEnv struct {
	db      *store.DB
	a       *App
	now     time.Time
	actor   Actor
	channel string
}

func newDowntimeEnv(t *testing.T, e storetest.Engine, start time.Time) *downtimeEnv {
	t.Helper()
	env := &downtimeEnv{db: storetest.OpenDB(t, e), now: start}
	env.a = New(env.db, nil, func() time.Time { return env.now }, slog.New(slog.DiscardHandler), Config{RetentionDays: 30})
	w := account.Workspace{ID: ids.New(ids.Workspace, start), Name: "WS downtime", Slug: "downtime", MaxMonitors: 10,
		MinIntervalSeconds: 10, CreatedAt: start}
	check(t, env.db.CreateWorkspace(ctx, w))
	env.actor = Actor{UserID: "usr_x", WorkspaceID: w.ID, Role: account.RoleOwner}
	env.channel = addChannel(t, env.db, w.ID, nil, nil)
	return env
}

// monitor creates a tcp monitor checked every 10 s with these
// thresholds, through the app, at the clock's time.
func (env *downtimeEnv) monitor(t *testing.T, th monitor.Thresholds) monitor.Monitor {
	t.Helper()
	return env.monitorEvery(t, 10, th)
}

func (env *downtimeEnv) monitorEvery(t *testing.T, interval int, th monitor.Thresholds) monitor.Monitor {
	t.Helper()
	m, err := env.a.CreateMonitor(ctx, env.actor, monitor.Draft{Type: monitor.TypeTCP, Name: "api", IntervalSeconds: interval,
		Config: monitor.Config{Host: "api.example", Port: 443, Confirmations: th.Confirmations, Recoveries: th.Recoveries}})
	check(t, err)
	return m
}

// check runs one check of m due at due that started at started (and
// finished then, by the clock), through the scheduler's path: claim, then
// RecordChecks.
func (env *downtimeEnv) check(t *testing.T, m monitor.Monitor, r monitor.Result, due, started time.Time) {
	t.Helper()
	env.now = started
	storetest.SetNextDue(t, env.db, m.ID, due)
	claimed, err := env.a.ClaimDue(ctx, "node", started, started, time.Minute, 1000)
	check(t, err)
	i := slices.IndexFunc(claimed, func(d monitor.DueCheck) bool { return d.Monitor.ID == m.ID })
	if i < 0 {
		t.Fatalf("%s not claimed at %v", m.ID, started)
	}
	_, err = env.a.RecordChecks(ctx, "node", []monitor.Completed{{Seq: claimed[i].Seq,
		Observation: monitor.Observation{MonitorID: m.ID, StartedAt: started, Due: due, Result: r, Probe: "p", Region: "r"},
		Thresholds:  monitor.Thresholds{Confirmations: m.Config.Confirmations, Recoveries: m.Config.Recoveries}}})
	check(t, err)
}

// states is m's state history as the API pages it, limit at a time,
// oldest first.
func (env *downtimeEnv) states(t *testing.T, m monitor.Monitor, limit int) []monitor.Transition {
	t.Helper()
	var out []monitor.Transition
	p := PageRequest{Limit: limit}
	for {
		page, err := env.a.ListStates(ctx, env.actor, m.ID, p)
		check(t, err)
		out = append(out, page.Items...)
		if page.NextCursor == "" {
			break
		}
		p.Cursor = page.NextCursor
	}
	slices.Reverse(out)
	return out
}

func TestDowntimeFromFirstFailedCheck(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			t.Run("ConfirmationsThree", func(t *testing.T) { testDowntimeConfirmationsThree(t, e) })
			t.Run("CursorKeepsBackdatedChanges", func(t *testing.T) { testDowntimeCursor(t, e) })
			t.Run("WorkedExample", func(t *testing.T) { testDowntimeWorkedExample(t, e) })
		})
	}
}

// A scripted outage with confirmations 3, every 10 s: down at +20, +30 and
// +40 s is DOWN from +20 s, confirmed (and told) at +40 s, until the
// passing check at +50 s. Then a failed check, two the probe could not
// tell (UNKNOWN at +80 s) and two failed ones: the streak began before
// UNKNOWN, but DOWN begins at its first failed check after it, +90 s, never
// before the UNKNOWN row. Metrics integrate exactly those spans; the
// incidents span them too, while events, their deliveries' retries and
// the incidents' creation follow the confirmations.
func testDowntimeConfirmationsThree(t *testing.T, e storetest.Engine) {
	start := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	env := newDowntimeEnv(t, e, start)
	m := env.monitor(t, monitor.Thresholds{Confirmations: 3})
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	up, down, unknown := monitor.ResultUp, monitor.ResultDown, monitor.ResultUnknown
	for i, r := range []monitor.Result{up, down, down, down, up, down, unknown, unknown, down, down, up} {
		env.check(t, m, r, at(10*(i+1)), at(10*(i+1)))
	}

	hist := env.states(t, m, 100)
	want := []struct {
		to              monitor.State
		at, confirmedAt time.Time
	}{
		{monitor.StateUp, at(10), time.Time{}},
		{monitor.StateDown, at(20), at(40)},
		{monitor.StateUp, at(50), time.Time{}},
		{monitor.StateUnknown, at(80), time.Time{}},
		{monitor.StateDown, at(90), at(100)},
		{monitor.StateUp, at(110), time.Time{}},
	}
	if len(hist) != len(want) {
		t.Fatalf("history %+v", hist)
	}
	for i, w := range want {
		if h := hist[i]; h.To != w.to || !h.At.Equal(w.at) || !h.ConfirmedAt.Equal(w.confirmedAt) {
			t.Errorf("change %d: %s at %v confirmed %v; want %s at %v confirmed %v", i, h.To, h.At, h.ConfirmedAt, w.to, w.at, w.confirmedAt)
		}
		if i > 0 && hist[i].At.Before(hist[i-1].At) {
			t.Errorf("change %d at %v reaches back before the change before it, at %v", i, hist[i].At, hist[i-1].At)
		}
	}

	// Metrics equal the spans' lengths: 30 s, then 20 s.
	env.now = at(120)
	figures := func(from, to time.Time) Figures {
		t.Helper()
		got, err := env.a.MonitorMetrics(ctx, env.actor, m.ID, MetricsRequest{From: &from, To: &to})
		check(t, err)
		return got.Figures
	}
	first := figures(start, at(60))
	if d := first.Durations; d.Down != 30*time.Second || d.Up != 20*time.Second || d.Pending != 10*time.Second {
		t.Errorf("the first outage's minute: %+v, want DOWN 30s, UP 20s, PENDING 10s", d)
	}
	if a := first.Ratios.Availability; a == nil || *a != 0.4 {
		t.Errorf("availability over the first minute %v, want 20/50", ratio(a))
	}
	all := figures(start, at(120))
	if d := all.Durations; d.Down != 50*time.Second || d.Unknown != 10*time.Second || d.Up != 50*time.Second {
		t.Errorf("two minutes: %+v, want DOWN 50s, UNKNOWN 10s, UP 50s", d)
	}
	if all.Incidents != 2 || all.MTTR == nil || *all.MTTR != 25*time.Second {
		t.Errorf("incidents %d, MTTR %v; want 2, the mean of 30s and 20s", all.Incidents, all.MTTR)
	}

	// Incidents span DOWN; they were opened when DOWN was confirmed.
	incs, err := env.db.ListIncidents(ctx, env.actor.WorkspaceID, store.IncidentQuery{SubjectID: m.ID})
	check(t, err)
	slices.SortFunc(incs, func(a, b *incident.Incident) int { return a.StartedAt.Compare(b.StartedAt) })
	if len(incs) != 2 {
		t.Fatalf("%d incidents, want 2", len(incs))
	}
	for i, w := range [][3]time.Time{{at(20), at(40), at(50)}, {at(90), at(100), at(110)}} {
		inc := incs[i]
		if !inc.StartedAt.Equal(w[0]) || !inc.CreatedAt.Equal(w[1]) || inc.ResolvedAt == nil || !inc.ResolvedAt.Equal(w[2]) ||
			len(inc.Updates) == 0 || !inc.Updates[0].At.Equal(w[1]) {
			t.Errorf("incident %d: started %v created %v resolved %v updates %+v; want %v, %v, %v", i, inc.StartedAt, inc.CreatedAt,
				inc.ResolvedAt, inc.Updates, w[0], w[1], w[2])
		}
	}

	// Events are dated by the confirmation, and say when the state began.
	evs, err := env.db.ListEvents(ctx, env.actor.WorkspaceID, 0, 100)
	check(t, err)
	var downs int
	for _, ev := range evs {
		var payload struct {
			CreatedAt time.Time
			Data      struct {
				To              monitor.State
				At, ConfirmedAt time.Time
				Incident        *struct{ StartedAt time.Time }
			}
		}
		check(t, json.Unmarshal(ev.Payload, &payload))
		switch {
		case ev.Type == incident.MonitorStateChanged && payload.Data.To == monitor.StateDown:
			w := want[1+3*downs]
			downs++
			if !ev.CreatedAt.Equal(w.confirmedAt) || !payload.CreatedAt.Equal(w.confirmedAt) || !payload.Data.At.Equal(w.at) ||
				!payload.Data.ConfirmedAt.Equal(w.confirmedAt) {
				t.Errorf("DOWN event created %v (payload %v), data at %v confirmed %v; want created and confirmed %v, at %v",
					ev.CreatedAt, payload.CreatedAt, payload.Data.At, payload.Data.ConfirmedAt, w.confirmedAt, w.at)
			}
		case ev.Type == incident.MonitorStateChanged && !payload.Data.At.Equal(payload.Data.ConfirmedAt):
			t.Errorf("%s event: at %v, confirmed %v; want one time", payload.Data.To, payload.Data.At, payload.Data.ConfirmedAt)
		case ev.Type == incident.IncidentOpened:
			if inc := payload.Data.Incident; inc == nil || !inc.StartedAt.Before(ev.CreatedAt) {
				t.Errorf("incident.opened created %v, incident %+v; want it started before", ev.CreatedAt, inc)
			}
		}
	}
	if downs != 2 {
		t.Errorf("%d DOWN events, want 2", downs)
	}
	// Each delivery retries for notify.RetryHorizon from its event's
	// confirmation, not from when the state began.
	ds, err := env.db.ListDeliveries(ctx, env.actor.WorkspaceID, store.DeliveryQuery{ChannelID: env.channel, Limit: 100})
	check(t, err)
	created := map[string]time.Time{}
	for _, ev := range evs {
		created[ev.ID] = ev.CreatedAt
	}
	if len(ds) != len(evs) {
		t.Fatalf("%d deliveries of %d events", len(ds), len(evs))
	}
	for _, d := range ds {
		if c := created[d.EventID]; !d.GiveUpAt.Equal(c.Add(notify.RetryHorizon)) {
			t.Errorf("delivery of %s (%s, created %v) gives up at %v", d.EventID, d.EventType, c, d.GiveUpAt)
		}
	}
}

// The state history's cursor: a change dated back to the first failed
// check is written while a reader pages; it is never dated before the
// latest change, so it sorts above the pages read: the reader's next pages
// neither skip nor repeat anything, and a fresh first page shows it. Ties
// of time are told apart by the change's order of writing.
func testDowntimeCursor(t *testing.T, e storetest.Engine) {
	start := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	env := newDowntimeEnv(t, e, start)
	m := env.monitor(t, monitor.Thresholds{Confirmations: 2})
	at := func(s int) time.Time { return start.Add(time.Duration(s) * time.Second) }
	env.check(t, m, monitor.ResultUp, at(10), at(10))
	// Due at +20 s, started at +50 s: no node was checking in between
	// (UNKNOWN from +20 s until a check says more); it failed, the first
	// of a streak.
	env.check(t, m, monitor.ResultDown, at(20), at(50))

	first, err := env.a.ListStates(ctx, env.actor, m.ID, PageRequest{Limit: 1})
	check(t, err)
	if len(first.Items) != 1 || first.Items[0].To != monitor.StateUnknown || !first.Items[0].At.Equal(at(20)) || first.NextCursor == "" {
		t.Fatalf("first page %+v", first)
	}

	env.check(t, m, monitor.ResultDown, at(60), at(60)) // confirms: DOWN from +50 s

	var rest []monitor.Transition
	for p := (PageRequest{Limit: 1, Cursor: first.NextCursor}); ; {
		page, err := env.a.ListStates(ctx, env.actor, m.ID, p)
		check(t, err)
		rest = append(rest, page.Items...)
		if page.NextCursor == "" {
			break
		}
		p.Cursor = page.NextCursor
	}
	if len(rest) != 1 || rest[0].To != monitor.StateUp || !rest[0].At.Equal(at(10)) {
		t.Errorf("the pages after the first: %+v; want UP at +10s", rest)
	}

	hist := env.states(t, m, 1)
	if len(hist) != 3 {
		t.Fatalf("paged one at a time: %+v, want 3 changes", hist)
	}
	if h := hist[2]; h.From != monitor.StateUnknown || h.To != monitor.StateDown || !h.At.Equal(at(50)) || !h.ConfirmedAt.Equal(at(60)) {
		t.Errorf("newest %+v, want UNKNOWN→DOWN at +50s confirmed at +60s", h)
	}
	if h := hist[1]; h.From != monitor.StateUp || h.To != monitor.StateUnknown || !h.At.Equal(at(20)) || !h.ConfirmedAt.Equal(at(50)) {
		t.Errorf("before it %+v, want the gap from +20s, confirmed at +50s", h)
	}
	if whole := env.states(t, m, 100); !slices.Equal(whole, hist) {
		t.Errorf("one page %+v, paged one at a time %+v", whole, hist)
	}

	// A cursor from before ties were told apart still pages by time.
	page, err := env.a.ListStates(ctx, env.actor, m.ID, PageRequest{Limit: 10, Cursor: encodeCursor(strconv.FormatInt(at(50).UnixMicro(), 10))})
	check(t, err)
	if len(page.Items) != 2 || !page.Items[0].At.Equal(at(20)) {
		t.Errorf("a cursor of a time alone: %+v", page.Items)
	}
	for _, bad := range []string{"x", "1:", ":1", "1:x", "1:0", "-5:3", "1:2:3"} {
		if _, err := env.a.ListStates(ctx, env.actor, m.ID, PageRequest{Limit: 10, Cursor: encodeCursor(bad)}); err == nil {
			t.Errorf("cursor %q accepted", bad)
		}
	}
}

// docs/metrics.md's example: checked every 60 s with confirmations 3,
// failing from 10:00:00, confirmed at 10:02:00, passing at 10:07:00: DOWN
// for 7 minutes, and 53/60 available over the hour.
func testDowntimeWorkedExample(t *testing.T, e storetest.Engine) {
	hour := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	env := newDowntimeEnv(t, e, hour.Add(-2*time.Minute))
	m := env.monitorEvery(t, 60, monitor.Thresholds{Confirmations: 3})
	for at := hour.Add(-time.Minute); at.Before(hour.Add(time.Hour)); at = at.Add(time.Minute) {
		r := monitor.ResultUp
		if !at.Before(hour) && at.Before(hour.Add(7*time.Minute)) {
			r = monitor.ResultDown
		}
		env.check(t, m, r, at, at)
	}
	hist := env.states(t, m, 100)
	if len(hist) != 3 || !hist[1].At.Equal(hour) || !hist[1].ConfirmedAt.Equal(hour.Add(2*time.Minute)) || !hist[2].At.Equal(hour.Add(7*time.Minute)) {
		t.Fatalf("history %+v", hist)
	}
	env.now = hour.Add(time.Hour)
	to := hour.Add(time.Hour)
	got, err := env.a.MonitorMetrics(ctx, env.actor, m.ID, MetricsRequest{From: &hour, To: &to})
	check(t, err)
	if d := got.Figures.Durations; d.Down != 7*time.Minute || d.Up != 53*time.Minute {
		t.Errorf("durations %+v, want DOWN 7m, UP 53m", d)
	}
	if a := got.Figures.Ratios.Availability; a == nil || math.Abs(*a-53.0/60) > 1e-12 {
		t.Errorf("availability %v, want 53/60", ratio(a))
	}
}
