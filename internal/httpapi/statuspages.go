package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/stamp"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// StatusPage is a status page as the API shows it. Its password is
// write-only: passwordSet tells whether one is stored.
type StatusPage struct {
	ID               string            `json:"id" example:"sp_01JD5Z8Q3C4M6V9X2B7N1K0PQR" doc:"Stable, sortable identifier."`
	Slug             string            `json:"slug" example:"acme" doc:"The page's path: /status/{slug}. Unique in the installation."`
	Title            string            `json:"title"`
	Description      string            `json:"description" doc:"Public text under the title; empty when none."`
	Visibility       string            `json:"visibility" enum:"public,password" doc:"public: anyone may read the page; password: readers need the page's password."`
	PasswordSet      bool              `json:"passwordSet" doc:"A password is stored (it is never shown)."`
	CustomDomain     *string           `json:"customDomain" nullable:"true" doc:"Host the page is also served at; null when none."`
	ShowUptime       bool              `json:"showUptime" doc:"Each component shows its uptime bar and figure."`
	UptimeDays       int               `json:"uptimeDays" enum:"30,60,90" doc:"The uptime bar's length in days."`
	PausedComponents string            `json:"pausedComponents" enum:"hide,show" doc:"Paused monitors and heartbeats are hidden, or shown as not monitored."`
	ShowIncidents    bool              `json:"showIncidents" doc:"The page lists incidents marked public."`
	ShowMaintenance  bool              `json:"showMaintenance" doc:"The page lists maintenance windows marked public."`
	Accent           string            `json:"accent" example:"#1f6feb" doc:"Accent colour, #rrggbb."`
	FooterLinks      []StatusPageLink  `json:"footerLinks"`
	Groups           []StatusPageGroup `json:"groups" doc:"Components in ordered groups."`
	Logo             *StatusPageLogo   `json:"logo" nullable:"true" doc:"The uploaded logo (PUT /status-pages/{id}/logo); null when none."`
	CreatedAt        stamp.Time        `json:"createdAt"`
	UpdatedAt        stamp.Time        `json:"updatedAt"`
}

// StatusPageLink is a link in the page's footer.
type StatusPageLink struct {
	Label string `json:"label" example:"Support"`
	URL   string `json:"url" example:"https://example.com/support" doc:"Absolute http or https URL."`
}

// StatusPageGroup is an ordered, named group of components.
type StatusPageGroup struct {
	Name       string                `json:"name" doc:"Heading over the group; empty for none."`
	Components []StatusPageComponent `json:"components"`
}

// StatusPageComponent is a monitor or heartbeat under its public name.
type StatusPageComponent struct {
	ID          string `json:"id" example:"spc_01JD5Z8Q3C4M6V9X2B7N1K0PQR" doc:"Kept while the same monitor or heartbeat stays on the page; badge URLs are made of it."`
	MonitorID   string `json:"monitorId,omitempty" doc:"The monitor shown (or heartbeatId)."`
	HeartbeatID string `json:"heartbeatId,omitempty" doc:"The heartbeat shown (or monitorId)."`
	Name        string `json:"name" doc:"Public display name."`
	Description string `json:"description" doc:"Public text; empty when none."`
}

// StatusPageLogo describes the page's logo.
type StatusPageLogo struct {
	ContentType string     `json:"contentType" enum:"image/png,image/jpeg,image/webp,image/gif"`
	SizeBytes   int        `json:"sizeBytes"`
	UpdatedAt   stamp.Time `json:"updatedAt"`
}

// Schema documents the logo inline and nullable: null is how a page
// says it has none.
func (StatusPageLogo) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeObject, Nullable: true, Required: []string{"contentType", "sizeBytes", "updatedAt"},
		AdditionalProperties: false, Description: "The page's logo, uploaded with PUT /api/v1/status-pages/{id}/logo.",
		Properties: map[string]*huma.Schema{
			"contentType": {Type: huma.TypeString, Enum: []any{"image/png", "image/jpeg", "image/webp", "image/gif"},
				Description: "The image's type, told by its first bytes."},
			"sizeBytes": {Type: huma.TypeInteger, Description: "The image's size in bytes."},
			"updatedAt": {Type: huma.TypeString, Format: "date-time", Description: "When it was uploaded."},
		}}
}

// StatusPageCreate is the body of POST /api/v1/status-pages.
type StatusPageCreate struct {
	Slug             string                 `json:"slug" example:"acme" doc:"The page's path, /status/{slug}: 2 to 63 lower-case letters, digits and single hyphens, unique in the installation; a few words such as api and admin are reserved."`
	Title            string                 `json:"title"`
	Description      string                 `json:"description,omitempty" doc:"Public text under the title."`
	Visibility       string                 `json:"visibility,omitempty" default:"public" doc:"password: readers need the page's password."`
	Password         string                 `json:"password,omitempty" writeOnly:"true" doc:"The page's password, 8 to 128 characters; required when visibility is password and none is stored. Stored hashed, never shown."`
	CustomDomain     string                 `json:"customDomain,omitempty" example:"status.example.com" doc:"A host name (no port, not an IP address) whose DNS points at this service, to serve the page at; unique in the installation."`
	ShowUptime       *bool                  `json:"showUptime,omitempty" default:"true" doc:"Show each component's uptime bar and figure."`
	UptimeDays       int                    `json:"uptimeDays,omitempty" default:"90" doc:"The uptime bar's length in days."`
	PausedComponents string                 `json:"pausedComponents,omitempty" default:"hide" doc:"hide paused monitors and heartbeats, or show them as not monitored."`
	ShowIncidents    *bool                  `json:"showIncidents,omitempty" default:"true" doc:"List incidents marked public."`
	ShowMaintenance  *bool                  `json:"showMaintenance,omitempty" default:"true" doc:"List maintenance windows marked public."`
	Accent           string                 `json:"accent,omitempty" default:"#1f6feb" doc:"Accent colour, #rrggbb; stored in lower case."`
	FooterLinks      []StatusPageLink       `json:"footerLinks,omitempty"`
	Groups           []StatusPageGroupWrite `json:"groups,omitempty" doc:"Components in ordered groups: at most 20 groups and 100 components; a monitor or heartbeat at most once per page."`
}

// StatusPageGroupWrite is a group as written.
type StatusPageGroupWrite struct {
	Name       string                     `json:"name,omitempty" doc:"Heading over the group; empty for none."`
	Components []StatusPageComponentWrite `json:"components,omitempty"`
}

// StatusPageComponentWrite is a component as written: exactly one of
// monitorId and heartbeatId, of this workspace.
type StatusPageComponentWrite struct {
	ID          string `json:"id,omitempty" doc:"Read-only: ignored when written, so a page read can be sent back. A component keeps its id while its monitor or heartbeat stays on the page."`
	MonitorID   string `json:"monitorId,omitempty"`
	HeartbeatID string `json:"heartbeatId,omitempty"`
	Name        string `json:"name" doc:"Public display name: readers see this, never the monitor's own name."`
	Description string `json:"description,omitempty" doc:"Public text."`
}

func (c StatusPageCreate) draft() app.StatusPageDraft {
	d := app.StatusPageDraft{Slug: c.Slug, Title: c.Title, Description: c.Description,
		Visibility: statuspage.Visibility(c.Visibility), Password: c.Password, CustomDomain: c.CustomDomain,
		ShowUptime: boolOr(c.ShowUptime, true), UptimeDays: c.UptimeDays, PausedComponents: statuspage.PausedComponents(c.PausedComponents),
		ShowIncidents: boolOr(c.ShowIncidents, true), ShowMaintenance: boolOr(c.ShowMaintenance, true), Accent: c.Accent}
	for _, l := range c.FooterLinks {
		d.FooterLinks = append(d.FooterLinks, statuspage.Link{Label: l.Label, URL: l.URL})
	}
	for _, g := range c.Groups {
		dg := app.StatusPageGroupDraft{Name: g.Name}
		for _, comp := range g.Components {
			dg.Components = append(dg.Components, app.StatusPageComponentDraft{MonitorID: comp.MonitorID,
				HeartbeatID: comp.HeartbeatID, Name: comp.Name, Description: comp.Description})
		}
		d.Groups = append(d.Groups, dg)
	}
	return d
}

// Resolve runs the domain's rules after the schema's, so one 422 lists
// every failing field. Rules that need the database (a slug or domain
// taken, monitors and heartbeats of the workspace) run in the use case.
func (c *StatusPageCreate) Resolve(huma.Context) []error {
	return fieldDetails(app.ValidateStatusPage(c.draft()))
}

func toStatusPage(p statuspage.Config) StatusPage {
	out := StatusPage{ID: p.ID, Slug: p.Slug, Title: p.Title, Description: p.Description, Visibility: string(p.Visibility),
		PasswordSet: p.PasswordHash != "", ShowUptime: p.ShowUptime, UptimeDays: p.UptimeDays,
		PausedComponents: string(p.PausedComponents), ShowIncidents: p.ShowIncidents, ShowMaintenance: p.ShowMaintenance,
		Accent: p.Accent, FooterLinks: []StatusPageLink{}, Groups: []StatusPageGroup{},
		CreatedAt: stamp.Of(p.CreatedAt), UpdatedAt: stamp.Of(p.UpdatedAt)}
	if p.CustomDomain != "" {
		d := p.CustomDomain
		out.CustomDomain = &d
	}
	for _, l := range p.FooterLinks {
		out.FooterLinks = append(out.FooterLinks, StatusPageLink{Label: l.Label, URL: l.URL})
	}
	for _, g := range p.Groups {
		og := StatusPageGroup{Name: g.Name, Components: []StatusPageComponent{}}
		for _, c := range g.Components {
			og.Components = append(og.Components, StatusPageComponent{ID: c.ID, MonitorID: c.MonitorID,
				HeartbeatID: c.HeartbeatID, Name: c.Name, Description: c.Description})
		}
		out.Groups = append(out.Groups, og)
	}
	if l := p.Logo; l != nil {
		out.Logo = &StatusPageLogo{ContentType: l.ContentType, SizeBytes: l.SizeBytes, UpdatedAt: stamp.Of(l.UpdatedAt)}
	}
	return out
}

// statusPageCreateForm is a stored page as the body that would create it
// (without its password, which is never read back).
func statusPageCreateForm(p statuspage.Config) StatusPageCreate {
	c := StatusPageCreate{Slug: p.Slug, Title: p.Title, Description: p.Description, Visibility: string(p.Visibility),
		CustomDomain: p.CustomDomain, ShowUptime: &p.ShowUptime, UptimeDays: p.UptimeDays,
		PausedComponents: string(p.PausedComponents), ShowIncidents: &p.ShowIncidents, ShowMaintenance: &p.ShowMaintenance,
		Accent: p.Accent}
	for _, l := range p.FooterLinks {
		c.FooterLinks = append(c.FooterLinks, StatusPageLink{Label: l.Label, URL: l.URL})
	}
	for _, g := range p.Groups {
		wg := StatusPageGroupWrite{Name: g.Name}
		for _, comp := range g.Components {
			wg.Components = append(wg.Components, StatusPageComponentWrite{MonitorID: comp.MonitorID,
				HeartbeatID: comp.HeartbeatID, Name: comp.Name, Description: comp.Description})
		}
		c.Groups = append(c.Groups, wg)
	}
	return c
}

// StatusPagePatch is the body of PATCH /api/v1/status-pages/{id}: a JSON
// merge patch (RFC 7396) of the page in its create form. It is a map so
// that null (remove or reset a field) and absent (keep it) stay
// distinguishable.
type StatusPagePatch map[string]any

// Schema is the create schema with every property optional and, but for
// slug and title, nullable.
func (StatusPagePatch) Schema(r huma.Registry) *huma.Schema {
	create := r.Schema(reflect.TypeFor[StatusPageCreate](), false, "")
	props := map[string]*huma.Schema{}
	for name, p := range create.Properties {
		cp := *p
		cp.Nullable, cp.Default = name != "slug" && name != "title", nil // absent keeps the stored value
		props[name] = &cp
	}
	return &huma.Schema{Type: huma.TypeObject, Properties: props, AdditionalProperties: false,
		Description: "A JSON merge patch (RFC 7396) of the page as created: fields given replace the stored ones, " +
			"null removes a field (or resets it to its default), fields not given stay; arrays (groups, footerLinks) are replaced whole, " +
			"and a component keeps its id when the same monitor or heartbeat stays on the page. " +
			"password: a string sets a new one, null removes it (only on a public page). " +
			"The result is validated as a whole, as a create is."}
}

// StatusPageID names one page.
type StatusPageID struct {
	InWorkspace
	ID string `path:"id" maxLength:"64" doc:"Status page id (sp_…)."`
}

type patchStatusPageInput struct {
	StatusPageID
	Body StatusPagePatch
}

type logoInput struct {
	StatusPageID
	RawBody []byte `contentType:"image/png"`
}

type statusPageBody struct {
	Body StatusPage
}

type createdStatusPage struct {
	Location string `header:"Location" doc:"URL of the new status page."`
	Body     StatusPage
}

var tagsStatusPages = []string{"Status pages"}

var opCreateStatusPage = idempotent(op(huma.Operation{OperationID: "createStatusPage", Method: http.MethodPost, Path: Prefix + "/status-pages",
	Summary:     "Create a status page",
	Description: "A public page at /status/{slug} (and at customDomain, if set) showing the chosen monitors and heartbeats under public names, with their uptime, public incidents and public maintenance windows.",
	Tags:        tagsStatusPages, DefaultStatus: http.StatusCreated},
	account.ScopeStatusPagesWrite, http.StatusPaymentRequired, http.StatusConflict, http.StatusRequestEntityTooLarge,
	http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity))

func (s *Server) createStatusPage(ctx context.Context, in *createInput[StatusPageCreate]) (*createdStatusPage, error) {
	p, err := s.app.CreateStatusPage(ctx, actorFrom(ctx), in.Body.draft())
	if err != nil {
		return nil, err
	}
	return &createdStatusPage{Location: Prefix + "/status-pages/" + p.ID, Body: toStatusPage(p)}, nil
}

var opListStatusPages = op(huma.Operation{OperationID: "listStatusPages", Method: http.MethodGet, Path: Prefix + "/status-pages",
	Summary: "List status pages", Description: "Pages in creation order, oldest first.", Tags: tagsStatusPages},
	account.ScopeStatusPagesRead, http.StatusUnprocessableEntity)

func (s *Server) listStatusPages(ctx context.Context, in *listInput) (*struct{ Body List[StatusPage] }, error) {
	p, err := s.app.ListStatusPages(ctx, actorFrom(ctx), app.PageRequest{Cursor: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	return &struct{ Body List[StatusPage] }{Body: toList(p, toStatusPage)}, nil
}

var opGetStatusPage = op(huma.Operation{OperationID: "getStatusPage", Method: http.MethodGet, Path: Prefix + "/status-pages/{id}",
	Summary: "Get a status page", Tags: tagsStatusPages}, account.ScopeStatusPagesRead, http.StatusNotFound)

func (s *Server) getStatusPage(ctx context.Context, in *StatusPageID) (*statusPageBody, error) {
	return oneStatusPage(s.app.GetStatusPage(ctx, actorFrom(ctx), in.ID))
}

var opUpdateStatusPage = op(huma.Operation{OperationID: "updateStatusPage", Method: http.MethodPatch, Path: Prefix + "/status-pages/{id}",
	Summary:     "Update a status page",
	Description: "Merges a JSON merge patch into the page and validates the result as a whole.",
	Tags:        tagsStatusPages},
	account.ScopeStatusPagesWrite, http.StatusNotFound, http.StatusConflict, http.StatusRequestEntityTooLarge,
	http.StatusUnsupportedMediaType, http.StatusUnprocessableEntity)

func (s *Server) updateStatusPage(ctx context.Context, in *patchStatusPageInput) (*statusPageBody, error) {
	return oneStatusPage(s.app.UpdateStatusPage(ctx, actorFrom(ctx), in.ID, s.applyStatusPagePatch(in.Body)))
}

var opDeleteStatusPage = op(huma.Operation{OperationID: "deleteStatusPage", Method: http.MethodDelete, Path: Prefix + "/status-pages/{id}",
	Summary: "Delete a status page", Description: "Its public URLs answer not found from then on.",
	Tags: tagsStatusPages, DefaultStatus: http.StatusNoContent}, account.ScopeStatusPagesWrite, http.StatusNotFound)

func (s *Server) deleteStatusPage(ctx context.Context, in *StatusPageID) (*struct{}, error) {
	return nil, s.app.DeleteStatusPage(ctx, actorFrom(ctx), in.ID)
}

var opPutStatusPageLogo = op(huma.Operation{OperationID: "putStatusPageLogo", Method: http.MethodPut, Path: Prefix + "/status-pages/{id}/logo",
	Summary: "Upload a status page's logo",
	Description: "The body is the image itself: PNG, JPEG, WebP or GIF (told by its first bytes, whatever Content-Type says; never SVG), " +
		"at most 128 KiB. It replaces any logo the page had; the page serves it from this service, never from elsewhere.",
	Tags: tagsStatusPages},
	account.ScopeStatusPagesWrite, http.StatusNotFound, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
	http.StatusUnprocessableEntity)

// metaRawBody marks operations whose body is not JSON: cleanBody leaves
// it to the handler.
const metaRawBody = "rawBody"

// imageBody makes o take an image as its raw body, of at most
// MaxStatusPageLogo bytes (413 beyond) in any of the logo types.
func imageBody(o huma.Operation) huma.Operation {
	o.Metadata[metaRawBody] = true
	o.MaxBodyBytes = app.MaxStatusPageLogo + 1 // huma refuses a body that fills the limit
	o.RequestBody = &huma.RequestBody{Required: true, Description: "The image's bytes.", Content: map[string]*huma.MediaType{}}
	for _, t := range app.StatusPageLogoTypes {
		o.RequestBody.Content[t] = &huma.MediaType{Schema: &huma.Schema{Type: huma.TypeString, Format: "binary"}}
	}
	return o
}

func (s *Server) putStatusPageLogo(ctx context.Context, in *logoInput) (*statusPageBody, error) {
	p, err := s.app.SetStatusPageLogo(ctx, actorFrom(ctx), in.ID, in.RawBody)
	if errors.Is(err, app.ErrLogoType) {
		return nil, &ErrorResponse{status: http.StatusUnsupportedMediaType, Err: ErrorObject{Code: "unsupported_media_type",
			Message: app.ErrLogoType.Message, RequestID: requestIDFrom(ctx)}}
	}
	return oneStatusPage(p, err)
}

var opDeleteStatusPageLogo = op(huma.Operation{OperationID: "deleteStatusPageLogo", Method: http.MethodDelete, Path: Prefix + "/status-pages/{id}/logo",
	Summary: "Remove a status page's logo", Description: "Answers the page, without a logo.", Tags: tagsStatusPages},
	account.ScopeStatusPagesWrite, http.StatusNotFound)

func (s *Server) deleteStatusPageLogo(ctx context.Context, in *StatusPageID) (*statusPageBody, error) {
	return oneStatusPage(s.app.DeleteStatusPageLogo(ctx, actorFrom(ctx), in.ID))
}

func oneStatusPage(p statuspage.Config, err error) (*statusPageBody, error) {
	if err != nil {
		return nil, err
	}
	return &statusPageBody{Body: toStatusPage(p)}, nil
}

// applyStatusPagePatch merges a PATCH body into the page's create form and
// validates the result against the same schema a create uses. The
// password is write-only: a string in the patch sets it, null removes it.
func (s *Server) applyStatusPagePatch(p StatusPagePatch) app.StatusPageUpdate {
	pw, hasPW := p["password"]
	return func(cur statuspage.Config) (app.StatusPageDraft, error) {
		c, err := patched[StatusPageCreate](s, statusPageCreateForm(cur), p)
		if err != nil {
			return app.StatusPageDraft{}, err
		}
		d := c.draft()
		d.RemovePassword = hasPW && pw == nil
		return d, nil
	}
}

// patched merges patch (RFC 7396) into cur, a resource in its create
// form C, validates the result against C's schema as a create would be,
// and decodes it.
func patched[C any](s *Server, cur C, patch map[string]any) (C, error) {
	var c C
	var merged map[string]any
	b, err := json.Marshal(cur)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &merged); err != nil {
		return c, err
	}
	mergePatch(merged, patch)
	res := &huma.ValidateResult{}
	registry := s.api.OpenAPI().Components.Schemas
	schema := registry.Schema(reflect.TypeFor[C](), false, "")
	huma.Validate(registry, schema, huma.NewPathBuffer([]byte("body"), 0), huma.ModeWriteToServer, merged, res)
	if len(res.Errors) > 0 {
		var fields []errs.FieldError
		for _, e := range res.Errors {
			if det, ok := e.(huma.ErrorDetailer); ok {
				d := det.ErrorDetail()
				fields = append(fields, errs.FieldError{Pointer: requiredPointer(locationPointer(d.Location), d.Message), Message: d.Message})
			}
		}
		return c, &errs.Error{Kind: errs.KindInvalid, Message: "the request has invalid fields", Fields: fields}
	}
	b, _ = json.Marshal(merged)
	if err := json.Unmarshal(b, &c); err != nil {
		return c, &errs.Error{Kind: errs.KindInvalid, Message: "the request has invalid fields",
			Fields: []errs.FieldError{{Pointer: "/", Message: err.Error()}}}
	}
	return c, nil
}
