package app

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/store"
)

// What status pages read of a workspace: its public incidents and
// maintenance windows that touch a page's components. These take no
// actor: they serve public pages, and a page says which workspace and
// which monitors and heartbeats it shows. They never return a private
// incident or window, nor one of another workspace.

// SubjectRef names a monitor or a heartbeat.
type SubjectRef struct {
	Type string // "monitor" or "heartbeat"
	ID   string
}

// MaxPublicSubjects bounds the subjects one public read names.
const MaxPublicSubjects = store.MaxPublicSubjects

// publicIDs are the ids of subjects whose type agrees with their id's
// prefix, once each; the others name nothing.
func publicIDs(subjects []SubjectRef) []string {
	ids := make([]string, 0, len(subjects))
	for _, s := range subjects {
		if (s.Type == "monitor" || s.Type == "heartbeat") && incident.SubjectType(s.ID) == s.Type {
			ids = append(ids, s.ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// PublicIncidents returns the workspace's public incidents that touch any
// of subjects (as their subject or an affected monitor or heartbeat):
// the open ones and those resolved at or after since, newest first by
// start, at most limit (default 50), each with its public updates
// (publicUpdates) oldest first. A page shows of an incident only its
// PublicTitle (or, for a manual incident without one, its Title), those
// updates, its status and times and the page's components it touches
// (Incident.Touches) — never Cause, Subject or the Title of an automatic
// incident, which name internal things.
func (a *App) PublicIncidents(ctx context.Context, workspaceID string, subjects []SubjectRef, since time.Time, limit int) ([]*incident.Incident, error) {
	if limit <= 0 {
		limit = 50
	}
	incs, err := a.store.PublicIncidents(ctx, workspaceID, publicIDs(subjects), since, limit)
	return publicUpdates(incs), err
}

// publicUpdates keeps of each incident's updates those people wrote: the
// ones Tocsin writes on an automatic incident (its cause, its recovery)
// name the internal monitor and what failed.
func publicUpdates(incs []*incident.Incident) []*incident.Incident {
	for _, inc := range incs {
		inc.Updates = slices.DeleteFunc(inc.Updates, func(u incident.Update) bool { return u.Automatic })
	}
	return incs
}

// PublicIncidentMonths returns the workspace's public incidents that
// touch any of subjects and started in the UTC month of month, newest
// first, each with its public updates (as PublicIncidents); and the first instants (UTC) of the
// nearest older and newer months that have such incidents, zero when
// there is none: a history pages by them.
func (a *App) PublicIncidentMonths(ctx context.Context, workspaceID string, subjects []SubjectRef, month time.Time) (
	incidents []*incident.Incident, older, newer time.Time, err error) {
	from := monthStart(month)
	incs, o, n, err := a.store.PublicIncidentsStarted(ctx, workspaceID, publicIDs(subjects), from, from.AddDate(0, 1, 0))
	if err != nil {
		return nil, time.Time{}, time.Time{}, err
	}
	return publicUpdates(incs), monthStart(o), monthStart(n), nil
}

// monthStart is the first instant of t's UTC month; zero stays zero.
func monthStart(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// PublicWindow is a public maintenance window as a status page shows it:
// its name and description, its current occurrence (Active) or its next,
// and which of the page's subjects it holds. It carries nothing else of
// the window.
type PublicWindow struct {
	ID          string
	Name        string
	Description string
	Active      bool
	StartsAt    time.Time // of the occurrence in progress, or of the next
	EndsAt      time.Time
	Subjects    []SubjectRef // of the subjects asked about, those it holds, by id
}

// PublicMaintenance returns the workspace's public maintenance windows
// that hold any of subjects and are active at now or have an occurrence
// starting before now+horizon, soonest first (so the active ones lead).
func (a *App) PublicMaintenance(ctx context.Context, workspaceID string, subjects []SubjectRef, now time.Time, horizon time.Duration) ([]PublicWindow, error) {
	ids := publicIDs(subjects)
	ws, err := a.store.PublicMaintenanceWindows(ctx, workspaceID, ids, now)
	if err != nil {
		return nil, err
	}
	var out []PublicWindow
	for _, w := range ws {
		timing, err := w.Timing()
		if err != nil {
			continue // stored windows were valid when saved; an invalid one never applies
		}
		pw := PublicWindow{ID: w.ID, Name: w.Name, Description: w.Description}
		if active, end := timing.Active(now); active {
			pw.Active, pw.EndsAt = true, end
			pw.StartsAt = w.StartsAt
			if w.Recurring() {
				pw.StartsAt = end.Add(-w.Duration)
			}
		} else {
			next, ok := timing.NextStart(now)
			if !ok || !next.Before(now.Add(horizon)) {
				continue
			}
			pw.StartsAt, pw.EndsAt = next, w.EndsAt
			if w.Recurring() {
				pw.EndsAt = next.Add(w.Duration)
			}
		}
		for _, id := range ids {
			if slices.Contains(w.MonitorIDs, id) || slices.Contains(w.HeartbeatIDs, id) {
				pw.Subjects = append(pw.Subjects, SubjectRef{Type: incident.SubjectType(id), ID: id})
			}
		}
		out = append(out, pw)
	}
	slices.SortStableFunc(out, func(x, y PublicWindow) int {
		if c := x.StartsAt.Compare(y.StartsAt); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out, nil
}
