package console

// The view models of the status page pages: the list and the editor.

// StatusPageRow is one page in the list.
type StatusPageRow struct {
	// ID is the page's id (sp_…), in /w/{ws}/status-pages/{id}.
	ID string
	// Title is its name.
	Title string
	// Slug makes its public address /status/{slug}.
	Slug string
	// Protected says readers need a password: the page is not published
	// to everyone.
	Protected bool
	// CustomDomain is its own host name, "" for none.
	CustomDomain string
	// Components is how many components it shows.
	Components int
}

// StatusPages is GET /w/{ws}/status-pages; a failed POST of its "New
// status page" form (fields "title", "slug") shows it again with the
// values typed and their errors.
type StatusPages struct {
	// Shell: set Shell.Active to NavStatusPages; roles that grant
	// status_pages:write see the form.
	Shell Shell
	Rows  []StatusPageRow
	// Title and Slug re-fill the form.
	Title, Slug string
	Errors      FormErrors
}

// StatusPageSettings re-fill the editor's settings form (POST
// /w/{ws}/status-pages/{id}, fields "title", "slug", "description",
// "visibility" (public or password), "password", "domain",
// "show-uptime", "show-incidents", "show-maintenance").
type StatusPageSettings struct {
	Title, Slug, Description string
	// Protected is the visibility "password".
	Protected                                  bool
	CustomDomain                               string
	ShowUptime, ShowIncidents, ShowMaintenance bool
}

// EditorComponent is one component in the editor's list.
type EditorComponent struct {
	// ID is the component's id (spc_…), in its forms' paths.
	ID string
	// Name is its public name.
	Name string
	// Subject says what it shows: "monitor Website" or "heartbeat
	// Backups" (the private name, for the editor only).
	Subject string
	// First and Last say it cannot move up or down.
	First, Last bool
}

// EditorGroup is one group of components; Index is its place, in its
// forms' paths.
type EditorGroup struct {
	Index       int
	Name        string
	Components  []EditorComponent
	First, Last bool
}

// SubjectChoice is a monitor or heartbeat the add-component form offers:
// Value "monitor:mon_…" or "heartbeat:hb_…".
type SubjectChoice struct {
	Value, Label string
}

// StatusPageEditor is GET /w/{ws}/status-pages/{id}.
type StatusPageEditor struct {
	// Shell: set Shell.Active to NavStatusPages; roles without
	// status_pages:write see the page read-only.
	Shell Shell
	ID    string
	// Settings and Errors are the settings form's values and messages.
	Settings StatusPageSettings
	Errors   FormErrors
	// Slug is the stored slug (the public address, the preview's).
	Slug string
	// Protected is the stored visibility; PasswordStored says a password
	// is kept (never shown), so "Unpublish" needs none typed.
	Protected, PasswordStored bool
	// CustomDomain is the stored custom domain; DNSTarget is what its DNS
	// record must point at: the service's host name (DNSType "CNAME"), or
	// its address when the service is reached by one ("A" or "AAAA").
	CustomDomain, DNSTarget, DNSType string
	// LogoVersion is the page's logo's version, "" without a logo (the
	// public page serves it at /status/{slug}/logo?v={version});
	// LogoErrors are the upload's messages (POST …/logo, multipart, field
	// "logo").
	LogoVersion string
	LogoErrors  FormErrors
	// Groups are the page's groups in order.
	Groups []EditorGroup
	// Subjects are the monitors and heartbeats not yet on the page.
	Subjects []SubjectChoice
	// AddName, AddSubject, AddGroup re-fill the add-component form
	// (fields "name", "subject", "group"); AddErrors are its messages
	// ("c-name", "c-subject").
	AddName, AddSubject string
	AddGroup            int
	AddErrors           FormErrors
	// GroupName re-fills the add-group form (field "name");
	// GroupErrors are its messages ("g-name").
	GroupName   string
	GroupErrors FormErrors
	// Version changes with every save, so the preview frame reloads.
	Version string
}

// Write reports whether the person may change the page.
func (v StatusPageEditor) Write() bool { return v.Shell.Role.Grants("status_pages:write") }

// PublicPath is the page's public address.
func (v StatusPageEditor) PublicPath() string { return "/status/" + v.Slug }

// Path is the editor's path, the base of its forms' actions.
func (v StatusPageEditor) Path() string {
	return "/w/" + v.Shell.WorkspaceID + "/status-pages/" + v.ID
}
