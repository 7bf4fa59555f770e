package app

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/store"
)

// Incidents: the automatic ones open and resolve with their subjects'
// states (record.go, in the state change's transaction); people write
// the manual ones, for status pages, and post updates to either kind.

// IncidentFilter narrows ListIncidents.
type IncidentFilter struct {
	Status    string // one of IncidentStatusFilters
	SubjectID string // a monitor or heartbeat: its own incidents and those it is affected by
	From, To  time.Time
}

// IncidentStatusFilters are the values of IncidentFilter.Status: open
// (not resolved), open and acknowledged or not yet, resolved, or the
// status the latest update gave.
var IncidentStatusFilters = []string{"open", "acknowledged", "unacknowledged", "resolved",
	string(incident.Investigating), string(incident.Identified), string(incident.Monitoring)}

// ListIncidents pages through the workspace's incidents, newest first.
func (a *App) ListIncidents(ctx context.Context, actor Actor, f IncidentFilter, p PageRequest) (Page[*incident.Incident], error) {
	if err := actor.Require(account.ScopeIncidentsRead); err != nil {
		return Page[*incident.Incident]{}, err
	}
	var problems []errs.FieldError
	if s := f.Status; s != "" && !slices.Contains(IncidentStatusFilters, s) {
		problems = append(problems, errs.FieldError{Pointer: "query.status",
			Message: "must be one of " + strings.Join(IncidentStatusFilters, ", ")})
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		problems = append(problems, errs.FieldError{Pointer: "query.to", Message: "must be after from"})
	}
	if len(problems) > 0 {
		return Page[*incident.Incident]{}, invalid(problems)
	}
	before, limit, err := p.decode()
	if err != nil {
		return Page[*incident.Incident]{}, err
	}
	incs, err := a.store.ListIncidents(ctx, actor.WorkspaceID, store.IncidentQuery{Status: f.Status, SubjectID: f.SubjectID,
		From: f.From, To: f.To, BeforeID: before, Limit: limit + 1})
	if err != nil {
		return Page[*incident.Incident]{}, err
	}
	page := Page[*incident.Incident]{Items: incs}
	if len(incs) > limit {
		page.Items = incs[:limit]
		page.NextCursor = encodeCursor(incs[limit-1].ID)
	}
	return page, nil
}

// GetIncident returns one incident of the actor's workspace.
func (a *App) GetIncident(ctx context.Context, actor Actor, id string) (*incident.Incident, error) {
	if err := actor.Require(account.ScopeIncidentsRead); err != nil {
		return nil, err
	}
	return a.store.GetIncident(ctx, actor.WorkspaceID, id)
}

// IncidentDraft is an incident as a person writes it.
type IncidentDraft struct {
	Title            string
	Status           incident.Status // default investigating
	Message          string          // its first update
	AffectedMonitors []string        // monitors and heartbeats of the workspace
	// Public shows it on the status pages that hold any of its affected
	// monitors and heartbeats (at least one is then required), under
	// PublicTitle when given, else Title.
	Public      bool
	PublicTitle string
}

// ValidateIncident checks a draft's fields without the database.
func ValidateIncident(d IncidentDraft) []errs.FieldError {
	var problems []errs.FieldError
	problems = append(problems, incident.ValidateTitle(d.Title)...)
	if d.Status != "" && (!d.Status.Valid() || d.Status == incident.Resolved) {
		problems = append(problems, errs.FieldError{Pointer: "/status", Message: "must be investigating, identified or monitoring"})
	}
	problems = append(problems, incident.ValidateMessage("/message", d.Message)...)
	problems = append(problems, incident.ValidateAffected(d.AffectedMonitors)...)
	problems = append(problems, incident.ValidatePublicTitle(d.PublicTitle)...)
	problems = append(problems, incident.ValidatePublic(&incident.Incident{Public: d.Public, AffectedMonitors: d.AffectedMonitors})...)
	return problems
}

// unknownSubjectsErr names the monitors and heartbeats a store refused as
// not the workspace's by their place in the request's list at ptr.
func unknownSubjectsErr(err error, ptr string, requested []string) error {
	var um *store.UnknownMonitorsError
	if errors.As(err, &um) {
		return invalid(unknownFields(ptr, "no such monitor or heartbeat in this workspace", requested, um.IDs))
	}
	return err
}

// CreateIncident stores an incident a person writes, for a status page.
func (a *App) CreateIncident(ctx context.Context, actor Actor, d IncidentDraft) (*incident.Incident, error) {
	if err := actor.Require(account.ScopeIncidentsWrite); err != nil {
		return nil, err
	}
	if problems := ValidateIncident(d); len(problems) > 0 {
		return nil, invalid(problems)
	}
	now := a.stamp()
	status := d.Status
	if status == "" {
		status = incident.Investigating
	}
	inc := &incident.Incident{ID: ids.New(ids.Incident, now), WorkspaceID: actor.WorkspaceID, Title: strings.TrimSpace(d.Title),
		Status: status, Origin: incident.Manual, AffectedMonitors: slices.Sorted(slices.Values(d.AffectedMonitors)),
		Public: d.Public, PublicTitle: strings.TrimSpace(d.PublicTitle), StartedAt: now, CreatedAt: now, UpdatedAt: now,
		Updates: []incident.Update{{Status: status, Message: d.Message, At: now}}}
	if inc.AffectedMonitors == nil {
		inc.AffectedMonitors = []string{}
	}
	err := a.store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CheckAffected(ctx, inc.WorkspaceID, inc.AffectedMonitors); err != nil {
			return err
		}
		if err := tx.InsertIncident(ctx, inc); err != nil {
			return err
		}
		return workflow{now: a.now}.incidentEvent(ctx, tx, incident.IncidentOpened, inc, inc.CreatedAt)
	})
	if err != nil {
		return nil, unknownSubjectsErr(err, "/affectedMonitors", d.AffectedMonitors)
	}
	return inc, nil
}

// incidentChange changes an incident read in the transaction that writes
// it back, and says which event tells of the change ("" for none) and
// which update it adds (nil for none).
type incidentChange func(inc *incident.Incident) (event string, update *incident.Update, err error)

// changeIncident reads the workspace's incident id, lets change alter its
// title, status, acknowledgement, resolution and affected monitors, and
// writes it back with the update and event change names, in one
// transaction that locks the incident. It returns the incident as
// written.
func (a *App) changeIncident(ctx context.Context, wsID, id string, change incidentChange) (inc *incident.Incident, err error) {
	if err := a.store.FlushPings(ctx, a.steps); err != nil { // a ping's incident is in the journal until applied
		return nil, err
	}
	err = a.store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if inc, err = tx.LockIncident(ctx, wsID, id); err != nil {
			return err
		}
		before := slices.Clone(inc.AffectedMonitors)
		event, update, err := change(inc)
		if err != nil || event == "" {
			return err
		}
		if !slices.Equal(before, inc.AffectedMonitors) {
			if err := tx.CheckAffected(ctx, wsID, inc.AffectedMonitors); err != nil {
				return err
			}
			if err := tx.SetIncidentMonitors(ctx, id, inc.AffectedMonitors); err != nil {
				return err
			}
		}
		if err := tx.UpdateIncident(ctx, inc); err != nil {
			return err
		}
		if update != nil {
			if err := tx.InsertIncidentUpdate(ctx, id, *update); err != nil {
				return err
			}
			inc.Updates = append(inc.Updates, *update)
		}
		return workflow{now: a.now}.incidentEvent(ctx, tx, event, inc, inc.UpdatedAt)
	})
	if err != nil {
		return nil, err
	}
	return inc, nil
}

// IncidentPatch changes an incident's title, affected monitors or
// publication; nil fields stay. An empty PublicTitle clears it.
type IncidentPatch struct {
	Title            *string
	AffectedMonitors *[]string
	Public           *bool
	PublicTitle      *string
}

// UpdateIncident applies p (incident.updated).
func (a *App) UpdateIncident(ctx context.Context, actor Actor, id string, p IncidentPatch) (*incident.Incident, error) {
	if err := actor.Require(account.ScopeIncidentsWrite); err != nil {
		return nil, err
	}
	var problems []errs.FieldError
	if p.Title != nil {
		problems = append(problems, incident.ValidateTitle(*p.Title)...)
	}
	if p.AffectedMonitors != nil {
		problems = append(problems, incident.ValidateAffected(*p.AffectedMonitors)...)
	}
	if p.PublicTitle != nil {
		problems = append(problems, incident.ValidatePublicTitle(*p.PublicTitle)...)
	}
	if len(problems) > 0 {
		return nil, invalid(problems)
	}
	now := a.stamp()
	inc, err := a.changeIncident(ctx, actor.WorkspaceID, id, func(inc *incident.Incident) (string, *incident.Update, error) {
		changed := false
		if p.Title != nil && strings.TrimSpace(*p.Title) != inc.Title {
			inc.Title, changed = strings.TrimSpace(*p.Title), true
		}
		if p.AffectedMonitors != nil {
			affected := slices.Sorted(slices.Values(*p.AffectedMonitors))
			if affected == nil {
				affected = []string{}
			}
			if !slices.Equal(affected, inc.AffectedMonitors) {
				inc.AffectedMonitors, changed = affected, true
			}
		}
		if p.Public != nil && *p.Public != inc.Public {
			inc.Public, changed = *p.Public, true
		}
		if p.PublicTitle != nil && strings.TrimSpace(*p.PublicTitle) != inc.PublicTitle {
			inc.PublicTitle, changed = strings.TrimSpace(*p.PublicTitle), true
		}
		if problems := incident.ValidatePublic(inc); len(problems) > 0 {
			if p.Public == nil { // the patch emptied the list of a public incident
				problems[0].Pointer = "/affectedMonitors"
			}
			return "", nil, invalid(problems)
		}
		if !changed {
			return "", nil, nil
		}
		inc.UpdatedAt = later(now, inc.UpdatedAt)
		return incident.IncidentUpdated, nil, nil
	})
	if err != nil && p.AffectedMonitors != nil {
		return nil, unknownSubjectsErr(err, "/affectedMonitors", *p.AffectedMonitors)
	}
	return inc, err
}

// PostIncidentUpdate adds an update to the timeline and moves the
// incident to its status: incident.resolved when that resolves it,
// incident.updated otherwise. A resolved incident takes further notes
// (status resolved), not a new status: an outage that comes back is a new
// incident.
func (a *App) PostIncidentUpdate(ctx context.Context, actor Actor, id string, status incident.Status, message string) (*incident.Incident, error) {
	if err := actor.Require(account.ScopeIncidentsWrite); err != nil {
		return nil, err
	}
	problems := incident.ValidateMessage("/message", message)
	if !status.Valid() {
		problems = append(problems, errs.FieldError{Pointer: "/status", Message: "must be investigating, identified, monitoring or resolved"})
	}
	if len(problems) > 0 {
		return nil, invalid(problems)
	}
	now := a.stamp()
	return a.changeIncident(ctx, actor.WorkspaceID, id, func(inc *incident.Incident) (string, *incident.Update, error) {
		if !inc.Open() && status != incident.Resolved {
			return "", nil, invalid([]errs.FieldError{{Pointer: "/status",
				Message: "the incident is resolved: its updates keep status resolved (an outage that comes back is a new incident)"}})
		}
		at := later(now, inc.UpdatedAt)
		event := incident.IncidentUpdated
		if status == incident.Resolved && inc.Open() {
			event, inc.ResolvedAt = incident.IncidentResolved, &at
		}
		inc.Status, inc.UpdatedAt = status, at
		return event, &incident.Update{Status: status, Message: message, At: at}, nil
	})
}

// AcknowledgeIncident records that someone is on it (incident.acknowledged,
// once; acknowledging again changes nothing).
func (a *App) AcknowledgeIncident(ctx context.Context, actor Actor, id string) (*incident.Incident, error) {
	if err := actor.Require(account.ScopeIncidentsWrite); err != nil {
		return nil, err
	}
	now := a.stamp()
	return a.changeIncident(ctx, actor.WorkspaceID, id, func(inc *incident.Incident) (string, *incident.Update, error) {
		if inc.AcknowledgedAt != nil || !inc.Open() {
			return "", nil, nil
		}
		at := later(now, inc.UpdatedAt)
		inc.AcknowledgedAt, inc.UpdatedAt = &at, at
		return incident.IncidentAcknowledged, nil, nil
	})
}

// ResolveIncident resolves an open incident with a last update (message,
// or a default); resolving a resolved one changes nothing.
func (a *App) ResolveIncident(ctx context.Context, actor Actor, id, message string) (*incident.Incident, error) {
	if err := actor.Require(account.ScopeIncidentsWrite); err != nil {
		return nil, err
	}
	if message == "" {
		message = "Resolved."
	}
	if problems := incident.ValidateMessage("/message", message); len(problems) > 0 {
		return nil, invalid(problems)
	}
	now := a.stamp()
	return a.changeIncident(ctx, actor.WorkspaceID, id, func(inc *incident.Incident) (string, *incident.Update, error) {
		if !inc.Open() {
			return "", nil, nil
		}
		at := later(now, inc.UpdatedAt)
		inc.Status, inc.ResolvedAt, inc.UpdatedAt = incident.Resolved, &at, at
		return incident.IncidentResolved, &incident.Update{Status: incident.Resolved, Message: message, At: at}, nil
	})
}

// stamp is now as incidents store it (UTC, to the microsecond).
func (a *App) stamp() time.Time { return a.now().UTC().Truncate(time.Microsecond) }
