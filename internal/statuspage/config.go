package statuspage

import "time"

// Config is a status page as its workspace keeps it: what the operator
// chose to show and how. The app validates it, the store keeps it, and a
// Page is rendered from it.
type Config struct {
	ID          string
	WorkspaceID string
	// Slug names the page in /status/{slug}; unique in the installation.
	Slug        string
	Title       string
	Description string
	Visibility  Visibility
	// PasswordHash is the argon2id PHC string of the page's password; ""
	// when none is set. PasswordVersion changes whenever the password
	// does, so sessions opened under an older one can be refused.
	PasswordHash    string
	PasswordVersion int64
	// CustomDomain is the host the page is also served at; "" for none.
	CustomDomain     string
	ShowUptime       bool
	UptimeDays       int
	PausedComponents PausedComponents
	ShowIncidents    bool
	ShowMaintenance  bool
	Accent           string // "#rrggbb", lower case
	FooterLinks      []Link
	Groups           []ConfigGroup
	// Logo describes the page's logo; nil when it has none. The bytes are
	// read apart, only by the public pages.
	Logo      *Logo
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Visibility says who may read a page.
type Visibility string

const (
	Public    Visibility = "public"
	Protected Visibility = "password" // readers need the page's password
)

// Visibilities lists the visibilities a page may have.
var Visibilities = []Visibility{Public, Protected}

// PausedComponents says what a page does with paused monitors and
// heartbeats.
type PausedComponents string

const (
	HidePaused PausedComponents = "hide"
	ShowPaused PausedComponents = "show" // as NotMonitored
)

// PausedChoices lists what a page may do with paused components.
var PausedChoices = []PausedComponents{HidePaused, ShowPaused}

// ConfigGroup is an ordered, named set of components; Name may be empty.
type ConfigGroup struct {
	Name       string
	Components []ConfigComponent
}

// ConfigComponent shows one monitor or heartbeat (exactly one of
// MonitorID and HeartbeatID) under a public name.
type ConfigComponent struct {
	ID          string // spc_…: kept while its subject stays on the page
	MonitorID   string
	HeartbeatID string
	Name        string
	Description string
}

// SubjectID is the monitor or heartbeat the component shows.
func (c ConfigComponent) SubjectID() string {
	if c.MonitorID != "" {
		return c.MonitorID
	}
	return c.HeartbeatID
}

// Logo is what is known of a page's logo without its bytes.
type Logo struct {
	ContentType string
	SizeBytes   int
	// Version changes with the logo's bytes.
	Version   string
	UpdatedAt time.Time
}
