package app

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store"
)

// What a recorded change writes beyond its own rows, in the transaction
// that makes it (DESIGN §6): a state change's event, the opening or
// resolution of its subject's incident with that incident's event, and
// for every event a delivery to each channel that hears it. The decisions
// are the domain's (incident.EffectOf, notify.Channel.Hears); the writes
// are store.Tx's primitives. Where the store stages pings itself (the
// ping writers, SQLite's journal), app hands it these with each call
// (pingSteps).

// workflow is app's decisions on recorded changes.
type workflow struct {
	now   func() time.Time
	plans *planCache
}

// pingSteps are w's decisions on pings, as the store takes them: a
// heartbeat's settings, a ping's move, the keys' lifetime, and the record
// of a state change.
func (w workflow) pingSteps() *store.PingSteps {
	return &store.PingSteps{Settings: w.settings, Ping: w.ping, KeyTTL: heartbeat.KeyTTL, Record: recordTransition}
}

// recordTransition appends tr to subjectID's state history and writes what
// follows from it.
func recordTransition(ctx context.Context, tx *store.Tx, subjectID string, tr monitor.Transition) error {
	if err := tx.AppendStateChange(ctx, subjectID, tr); err != nil {
		return err
	}
	return workflow{}.transition(ctx, tx, subjectID, tr)
}

// transition writes the events of subjectID's state change tr, and opens
// or resolves its incident. A subject deleted meanwhile has none, and a
// quiet change (our own outage, and the return from it) none either: it
// is for the state history only (DESIGN §7). The events, the incident's
// id and the deliveries' retries follow when the change was confirmed;
// the incident's start and, for a recovery, its resolution, when the
// state began: an outage counts from its first failed check, and the
// incident spans what the state history calls DOWN.
func (w workflow) transition(ctx context.Context, tx *store.Tx, subjectID string, tr monitor.Transition) error {
	if tr.Quiet {
		return nil
	}
	s, wsID, ok, err := tx.Subject(ctx, subjectID)
	if err != nil || !ok {
		return err
	}
	confirmed := tr.Confirmed()
	ev := incident.Event{ID: ids.New(ids.Event, confirmed), Type: incident.StateChangedType(subjectID), CreatedAt: confirmed,
		WorkspaceID: wsID, Data: incident.StateChangeData{Subject: s, From: tr.From, To: tr.To, Cause: tr.Cause, At: tr.At, ConfirmedAt: confirmed}}
	if err := w.event(ctx, tx, ev, subjectID, "", []string{subjectID}); err != nil {
		return err
	}
	open, _, err := tx.OpenIncident(ctx, subjectID)
	if err != nil {
		return err
	}
	switch incident.EffectOf(tr) {
	case incident.OpenNew:
		if open != "" {
			return nil // one open incident per subject
		}
		inc := &incident.Incident{ID: ids.New(ids.Incident, confirmed), WorkspaceID: wsID, Title: incident.AutoTitle(s),
			Status: incident.Investigating, Origin: incident.Automatic, Subject: &s, Cause: tr.Cause,
			AffectedMonitors: []string{subjectID}, StartedAt: tr.At, CreatedAt: confirmed, UpdatedAt: confirmed,
			Updates: []incident.Update{{Status: incident.Investigating, Message: tr.Cause, At: confirmed, Automatic: true}}}
		if err := tx.InsertIncident(ctx, inc); err != nil {
			return err
		}
		return w.incidentEvent(ctx, tx, incident.IncidentOpened, inc, confirmed)
	case incident.Resolve:
		if open == "" {
			return nil
		}
		return w.resolve(ctx, tx, open, incident.ResolveMessage(s, tr), tr.At, confirmed)
	}
	return nil
}

// deleted resolves the open incident of a subject being deleted (in its
// transaction, before its row goes): nothing is left to recover.
func (w workflow) deleted(ctx context.Context, tx *store.Tx, subjectID string) error {
	open, name, err := tx.OpenIncident(ctx, subjectID)
	if err != nil || open == "" {
		return err
	}
	now := time.Now
	if w.now != nil {
		now = w.now
	}
	at := now().UTC().Truncate(time.Microsecond)
	return w.resolve(ctx, tx, open, name+" was deleted", at, at)
}

// resolve resolves the incident id as of resolvedAt with a last update
// written at at, and tells of it at at.
func (w workflow) resolve(ctx context.Context, tx *store.Tx, id, message string, resolvedAt, at time.Time) error {
	inc, err := tx.ResolveIncident(ctx, id, resolvedAt, incident.Update{Status: incident.Resolved, Message: message, At: at, Automatic: true})
	if err != nil {
		return err
	}
	return w.incidentEvent(ctx, tx, incident.IncidentResolved, inc, at)
}

// incidentEvent writes the event typ about inc, heard by channels that
// listen to its subject or any monitor it affects.
func (w workflow) incidentEvent(ctx context.Context, tx *store.Tx, typ string, inc *incident.Incident, at time.Time) error {
	subjectID := ""
	subjects := slices.Clone(inc.AffectedMonitors)
	if inc.Subject != nil {
		subjectID = inc.Subject.ID
		subjects = append(subjects, subjectID)
	}
	return w.event(ctx, tx, incident.Event{ID: ids.New(ids.Event, at), Type: typ, CreatedAt: at, WorkspaceID: inc.WorkspaceID,
		Data: incident.IncidentData{Incident: inc}}, subjectID, inc.ID, subjects)
}

// event adds ev to the outbox with a delivery to each enabled channel of
// its workspace that hears it (about these subjects). Deliveries of one
// incident, or of one subject's state changes, go out in order, and are
// tried until notify.RetryHorizon has passed.
func (workflow) event(ctx context.Context, tx *store.Tx, ev incident.Event, subjectID, incidentID string, subjects []string) error {
	if err := tx.InsertEvent(ctx, ev, subjectID, incidentID); err != nil {
		return err
	}
	channels, err := tx.EnabledChannels(ctx, ev.WorkspaceID)
	if err != nil {
		return err
	}
	for _, c := range channels {
		if !c.Hears(ev.Type, subjects) {
			continue
		}
		if _, err := tx.InsertDelivery(ctx, ev, c.ID, cmp.Or(incidentID, subjectID), ev.CreatedAt.Add(notify.RetryHorizon)); err != nil {
			return err
		}
	}
	return nil
}

// settings is what h's state machine runs on: its schedule compiled (once
// per distinct schedule, see planCache) and its bounds.
func (w workflow) settings(h heartbeat.Heartbeat) (heartbeat.Settings, error) {
	plan, err := w.plans.plan(h.Schedule)
	if err != nil {
		return heartbeat.Settings{}, fmt.Errorf("schedule of %s: %w", h.ID, err)
	}
	return heartbeat.Settings{Plan: plan, MaxRuntime: time.Duration(h.MaxRuntimeSeconds) * time.Second}, nil
}

// ping moves rt by the ping rec and notes in rec what it did: the run's
// duration, or that the heartbeat is paused and the ping ignored.
func (workflow) ping(rt heartbeat.Runtime, rec *heartbeat.PingRecord, s heartbeat.Settings) (heartbeat.Runtime, *monitor.Transition) {
	if rt.State == monitor.StatePaused {
		rec.Ignored = true
		return rt, nil
	}
	rt, tr, dur := rt.Ping(heartbeat.Ping{Signal: rec.Signal, ExitCode: rec.ExitCode, RunID: rec.RunID, At: rec.At}, s)
	rec.Duration = dur
	return rt, tr
}

// planCache keeps compiled schedules: pings and sweeps need one for every
// heartbeat they touch, and a cron expression is not free to parse.
type planCache struct {
	mu sync.Mutex
	m  map[heartbeat.Schedule]heartbeat.Plan
}

func (c *planCache) plan(s heartbeat.Schedule) (heartbeat.Plan, error) {
	c.mu.Lock()
	plan, ok := c.m[s]
	c.mu.Unlock()
	if ok {
		return plan, nil
	}
	plan, err := s.Compile()
	if err != nil {
		return heartbeat.Plan{}, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= 10_000 {
		c.m = map[heartbeat.Schedule]heartbeat.Plan{}
	}
	c.m[s] = plan
	c.mu.Unlock()
	return plan, nil
}
