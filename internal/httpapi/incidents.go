package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/stamp"
)

// Incident is an incident as the API shows it, and as incident events
// carry it.
type Incident struct {
	ID               string           `json:"id" example:"inc_01JD5Z8Q3C4M6V9X2B7N1K0PQR" doc:"Stable, sortable identifier."`
	WorkspaceID      string           `json:"workspaceId"`
	Title            string           `json:"title"`
	Status           string           `json:"status" enum:"investigating,identified,monitoring,resolved" doc:"Where the incident stands, as its latest update says."`
	Origin           string           `json:"origin" enum:"automatic,manual" doc:"automatic: opened when its subject went DOWN, resolved when it recovers (or is paused or deleted). manual: written by a person, e.g. for a status page."`
	Subject          *IncidentSubject `json:"subject,omitempty" doc:"The monitor or heartbeat whose outage it is; absent for manual incidents."`
	Cause            string           `json:"cause" doc:"Why the subject went DOWN, from the failing observations; empty for manual incidents."`
	AffectedMonitors []string         `json:"affectedMonitors" doc:"Monitors and heartbeats the incident affects."`
	Public           bool             `json:"public" doc:"Shown on the status pages that hold its subject or any of its affected monitors and heartbeats."`
	PublicTitle      string           `json:"publicTitle" doc:"The title status page readers see; empty when none is set (see the create body)."`
	StartedAt        stamp.Time       `json:"startedAt"`
	AcknowledgedAt   *stamp.Time      `json:"acknowledgedAt" nullable:"true" doc:"When someone acknowledged it; null until then."`
	ResolvedAt       *stamp.Time      `json:"resolvedAt" nullable:"true" doc:"When it was resolved; null while open."`
	CreatedAt        stamp.Time       `json:"createdAt"`
	UpdatedAt        stamp.Time       `json:"updatedAt"`
	Updates          []IncidentUpdate `json:"updates" doc:"The timeline, oldest first."`
}

// IncidentSubject names a monitor or heartbeat.
type IncidentSubject struct {
	Type string `json:"type" enum:"monitor,heartbeat"`
	ID   string `json:"id"`
	Name string `json:"name"`
}

// IncidentUpdate is one entry of an incident's timeline.
type IncidentUpdate struct {
	Status  string     `json:"status" enum:"investigating,identified,monitoring,resolved"`
	Message string     `json:"message"`
	At      stamp.Time `json:"at"`
}

func toIncident(inc *incident.Incident) Incident {
	out := Incident{ID: inc.ID, WorkspaceID: inc.WorkspaceID, Title: inc.Title, Status: string(inc.Status),
		Origin: string(inc.Origin), Cause: inc.Cause, AffectedMonitors: append([]string{}, inc.AffectedMonitors...),
		Public: inc.Public, PublicTitle: inc.PublicTitle,
		StartedAt: stamp.Of(inc.StartedAt), AcknowledgedAt: stamp.Ptr(inc.AcknowledgedAt), ResolvedAt: stamp.Ptr(inc.ResolvedAt),
		CreatedAt: stamp.Of(inc.CreatedAt), UpdatedAt: stamp.Of(inc.UpdatedAt), Updates: make([]IncidentUpdate, 0, len(inc.Updates))}
	if s := inc.Subject; s != nil {
		out.Subject = &IncidentSubject{Type: s.Type, ID: s.ID, Name: s.Name}
	}
	for _, u := range inc.Updates {
		out.Updates = append(out.Updates, IncidentUpdate{Status: string(u.Status), Message: u.Message, At: stamp.Of(u.At)})
	}
	return out
}

// IncidentCreate is the body of POST /api/v1/incidents.
type IncidentCreate struct {
	Title            string   `json:"title" example:"Checkout is slow" doc:"What people see, e.g. on a status page."`
	Status           string   `json:"status,omitempty" enum:"investigating,identified,monitoring" default:"investigating" doc:"Where it stands; default investigating."`
	Message          string   `json:"message" doc:"The first update."`
	AffectedMonitors []string `json:"affectedMonitors,omitempty" doc:"Monitors and heartbeats of this workspace it affects."`
	Public           bool     `json:"public,omitempty" default:"false" doc:"Show the incident on the status pages that hold any of its affected monitors and heartbeats (and, for an automatic incident, its subject); at least one is then required. Readers see its public title and the status and message of every update people post, exactly as written, so write them for customers; the cause and recovery updates Tocsin writes on an automatic incident are never shown. Default false: private."`
	PublicTitle      string   `json:"publicTitle,omitempty" doc:"The title status page readers see, at most 200 characters; empty: none. Without one, a manual incident shows its title, and an automatic incident (whose title names the internal monitor or heartbeat) shows a generic title made from the public names of the page's components it affects."`
}

// Resolve runs the domain's rules after the schema's, so one 422 lists
// every failing field.
func (c *IncidentCreate) Resolve(huma.Context) []error {
	return fieldDetails(app.ValidateIncident(c.draft()))
}

func (c IncidentCreate) draft() app.IncidentDraft {
	return app.IncidentDraft{Title: c.Title, Status: incident.Status(c.Status), Message: c.Message, AffectedMonitors: c.AffectedMonitors,
		Public: c.Public, PublicTitle: c.PublicTitle}
}

// IncidentPatchBody is the body of PATCH /api/v1/incidents/{id}: the
// fields given replace the stored ones. Status moves by updates.
type IncidentPatchBody struct {
	Title            *string   `json:"title,omitempty"`
	AffectedMonitors *[]string `json:"affectedMonitors,omitempty" doc:"Replaces the list whole."`
	Public           *bool     `json:"public,omitempty" doc:"Show the incident on the status pages that hold any of its affected monitors and heartbeats (and, for an automatic incident, its subject); at least one is then required. Readers see its public title and the status and message of every update people post, exactly as written, so write them for customers; the cause and recovery updates Tocsin writes on an automatic incident are never shown. Default false: private."`
	PublicTitle      *string   `json:"publicTitle,omitempty" doc:"The title status page readers see, at most 200 characters; empty: none. Without one, a manual incident shows its title, and an automatic incident (whose title names the internal monitor or heartbeat) shows a generic title made from the public names of the page's components it affects. An empty string removes it."`
}

// IncidentUpdateCreate is the body of POST /api/v1/incidents/{id}/updates.
type IncidentUpdateCreate struct {
	Status  string `json:"status" enum:"investigating,identified,monitoring,resolved" doc:"Where the incident stands now; resolved resolves it."`
	Message string `json:"message"`
}

// IncidentResolveBody is the optional body of POST …/resolve.
type IncidentResolveBody struct {
	Message string `json:"message,omitempty" doc:"The last update; default \"Resolved.\""`
}

// IncidentID names one incident.
type IncidentID struct {
	InWorkspace
	ID string `path:"id" maxLength:"64" doc:"Incident id (inc_…)."`
}

type listIncidentsInput struct {
	InWorkspace
	Cursor  string               `query:"cursor" maxLength:"512" doc:"nextCursor from the previous page."`
	Limit   int                  `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Page size, 1 to 100."`
	Status  IncidentStatusFilter `query:"status" doc:"open (not resolved), acknowledged or unacknowledged (open ones only), resolved, or the status of the latest update."`
	Subject string               `query:"subject" maxLength:"64" doc:"A monitor or heartbeat id: its incidents, and those that list it as affected."`
	From    time.Time            `query:"from" doc:"Only incidents that started at or after this time (RFC 3339)."`
	To      time.Time            `query:"to" doc:"Only incidents that started before this time (RFC 3339)."`
}

type incidentBody struct {
	Body Incident
}

type createdIncident struct {
	Location string `header:"Location" doc:"URL of the new incident."`
	Body     Incident
}

type patchIncidentInput struct {
	IncidentID
	Body IncidentPatchBody
}

type postIncidentUpdateInput struct {
	IncidentID
	Body IncidentUpdateCreate
}

type resolveIncidentInput struct {
	IncidentID
	Body *IncidentResolveBody `required:"false"`
}

var tagsIncidents = []string{"Incidents"}

var opCreateIncident = idempotent(op(huma.Operation{OperationID: "createIncident", Method: http.MethodPost, Path: Prefix + "/incidents",
	Summary:     "Create an incident",
	Description: "A manual incident, e.g. for a status page. Incidents also open by themselves when a monitor or heartbeat goes DOWN (origin automatic).",
	Tags:        tagsIncidents, DefaultStatus: http.StatusCreated},
	account.ScopeIncidentsWrite, http.StatusConflict, http.StatusRequestEntityTooLarge,
	http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity))

func (s *Server) createIncident(ctx context.Context, in *createInput[IncidentCreate]) (*createdIncident, error) {
	inc, err := s.app.CreateIncident(ctx, actorFrom(ctx), in.Body.draft())
	if err != nil {
		return nil, err
	}
	return &createdIncident{Location: Prefix + "/incidents/" + inc.ID, Body: toIncident(inc)}, nil
}

var opListIncidents = op(huma.Operation{OperationID: "listIncidents", Method: http.MethodGet, Path: Prefix + "/incidents",
	Summary: "List incidents", Description: "Newest first.", Tags: tagsIncidents},
	account.ScopeIncidentsRead, http.StatusUnprocessableEntity)

func (s *Server) listIncidents(ctx context.Context, in *listIncidentsInput) (*struct{ Body List[Incident] }, error) {
	p, err := s.app.ListIncidents(ctx, actorFrom(ctx), app.IncidentFilter{Status: string(in.Status), SubjectID: in.Subject,
		From: in.From, To: in.To}, app.PageRequest{Cursor: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	return &struct{ Body List[Incident] }{Body: toList(p, toIncident)}, nil
}

var opGetIncident = op(huma.Operation{OperationID: "getIncident", Method: http.MethodGet, Path: Prefix + "/incidents/{id}",
	Summary: "Get an incident", Tags: tagsIncidents}, account.ScopeIncidentsRead, http.StatusNotFound)

func (s *Server) getIncident(ctx context.Context, in *IncidentID) (*incidentBody, error) {
	return oneIncident(s.app.GetIncident(ctx, actorFrom(ctx), in.ID))
}

var opUpdateIncident = op(huma.Operation{OperationID: "updateIncident", Method: http.MethodPatch, Path: Prefix + "/incidents/{id}",
	Summary: "Update an incident", Description: "Changes its title, affected monitors or publication (public, publicTitle); any change emits incident.updated. Its status moves by updates.",
	Tags: tagsIncidents}, account.ScopeIncidentsWrite, http.StatusNotFound, http.StatusRequestEntityTooLarge,
	http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)

func (s *Server) updateIncident(ctx context.Context, in *patchIncidentInput) (*incidentBody, error) {
	return oneIncident(s.app.UpdateIncident(ctx, actorFrom(ctx), in.ID,
		app.IncidentPatch{Title: in.Body.Title, AffectedMonitors: in.Body.AffectedMonitors, Public: in.Body.Public, PublicTitle: in.Body.PublicTitle}))
}

var opPostIncidentUpdate = op(huma.Operation{OperationID: "postIncidentUpdate", Method: http.MethodPost, Path: Prefix + "/incidents/{id}/updates",
	Summary:     "Post an incident update",
	Description: "Adds to the timeline and moves the incident to the update's status (incident.updated; incident.resolved when it resolves it). A resolved incident takes further notes with status resolved.",
	Tags:        tagsIncidents, DefaultStatus: http.StatusCreated}, account.ScopeIncidentsWrite, http.StatusNotFound,
	http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)

func (s *Server) postIncidentUpdate(ctx context.Context, in *postIncidentUpdateInput) (*incidentBody, error) {
	return oneIncident(s.app.PostIncidentUpdate(ctx, actorFrom(ctx), in.ID, incident.Status(in.Body.Status), in.Body.Message))
}

var opAcknowledgeIncident = op(huma.Operation{OperationID: "acknowledgeIncident", Method: http.MethodPost, Path: Prefix + "/incidents/{id}/acknowledge",
	Summary: "Acknowledge an incident", Description: "Records that someone is on it (incident.acknowledged, once). Acknowledging again changes nothing.",
	Tags: tagsIncidents}, account.ScopeIncidentsWrite, http.StatusNotFound)

func (s *Server) acknowledgeIncident(ctx context.Context, in *IncidentID) (*incidentBody, error) {
	return oneIncident(s.app.AcknowledgeIncident(ctx, actorFrom(ctx), in.ID))
}

var opResolveIncident = op(huma.Operation{OperationID: "resolveIncident", Method: http.MethodPost, Path: Prefix + "/incidents/{id}/resolve",
	Summary: "Resolve an incident", Description: "Resolves it with a last update (incident.resolved). Resolving a resolved incident changes nothing.",
	Tags: tagsIncidents}, account.ScopeIncidentsWrite, http.StatusNotFound, http.StatusRequestEntityTooLarge,
	http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)

func (s *Server) resolveIncident(ctx context.Context, in *resolveIncidentInput) (*incidentBody, error) {
	msg := ""
	if in.Body != nil {
		msg = in.Body.Message
	}
	return oneIncident(s.app.ResolveIncident(ctx, actorFrom(ctx), in.ID, msg))
}

// oneIncident is the response of an operation that returns one incident.
func oneIncident(inc *incident.Incident, err error) (*incidentBody, error) {
	if err != nil {
		return nil, err
	}
	return &incidentBody{Body: toIncident(inc)}, nil
}
