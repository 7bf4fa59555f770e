package console

import (
	"net/http"

	"github.com/tocsin/tocsin/internal/account"
)

// Nav names the main navigation's item a page belongs to (marked
// aria-current="page").
type Nav string

// The navigation's items.
const (
	NavNone       Nav = ""
	NavHome       Nav = "home"       // /w/{id}/
	NavKeys       Nav = "keys"       // /w/{id}/keys
	NavMembers    Nav = "members"    // /w/{id}/members
	NavMonitors   Nav = "monitors"   // /w/{id}/monitors and below
	NavWorkspaces Nav = "workspaces" // /workspaces
	NavAccount    Nav = "account"    // /account and below
	NavChannels   Nav = "channels"   // /w/{id}/channels and below
	NavHeartbeats Nav = "heartbeats" // /w/{id}/heartbeats and below
)

// NavStatusPages is /w/{id}/status-pages and below.
const NavStatusPages Nav = "status-pages"

// FlashKind is the kind of a flash message.
type FlashKind string

// The flash kinds.
const (
	FlashSuccess FlashKind = "success"
	FlashError   FlashKind = "error"
)

// Flash is a one-time message shown above a page's content, such as
// "API key revoked." after a redirect.
type Flash struct {
	// Kind is FlashSuccess or FlashError; an error is announced with
	// role="alert", a success with role="status".
	Kind FlashKind
	// Message is the text shown; an empty Message shows no flash.
	Message string
}

// WorkspaceChoice is one workspace of the person, as the workspace
// switcher and the workspace list show it.
type WorkspaceChoice struct {
	// ID is the workspace's id (ws_…): the switcher's option value and
	// the /w/{id}/ of its links.
	ID string
	// Name is the workspace's display name.
	Name string
	// Role is the person's role in it.
	Role account.Role
}

// Shell is what every page shares: who is signed in, where they are, and
// a message to show once.
type Shell struct {
	// Email is the signed-in person's e-mail, shown in the account menu.
	// Empty on the pages of people who are not signed in; those pages get
	// the minimal layout without navigation.
	Email string
	// Workspaces are the person's workspaces for the switcher (POST
	// /switch-workspace, field "workspace"), in the order to show them.
	Workspaces []WorkspaceChoice
	// WorkspaceID is the current workspace's id; "" when the person is in
	// none (then the navigation shows no workspace items).
	WorkspaceID string
	// WorkspaceName is the current workspace's display name.
	WorkspaceName string
	// Role is the person's role in the current workspace.
	Role account.Role
	// Active is the navigation item the page belongs to.
	Active Nav
	// Flash is a message shown once above the content; zero for none.
	Flash Flash
	// ForcedPassword is set while the person must replace a one-time
	// password before anything else: the header then offers only signing
	// out.
	ForcedPassword bool
	// BaseURL is the app's public origin without a trailing slash
	// ("https://tocsin.example.com"), for the examples that show full URLs.
	BaseURL string
	// Live is the path of the workspace's live stream ("/w/{ws}/live") on
	// pages whose monitors and heartbeats change state while open: the
	// script patches their rows ([data-monitor-id], [data-heartbeat-id])
	// from it. Empty: the page does not follow changes.
	Live string

	bare bool // the minimal layout, whoever is signed in
}

// Minimal reports whether the page gets the layout without navigation:
// for people not signed in, or still signing in.
func (s Shell) Minimal() bool { return s.bare || s.Email == "" }

// Home is where the product name in the header leads.
func (s Shell) Home() string {
	if s.WorkspaceID != "" {
		return "/w/" + s.WorkspaceID + "/"
	}
	return "/workspaces"
}

// shell is what every signed-in page shares.
func (w *Server) shell(q *request, nav Nav) (Shell, error) {
	s := Shell{Email: q.ws.User.Email, Active: nav, BaseURL: w.base, ForcedPassword: q.ws.User.MustChangePassword,
		Flash: w.takeFlash(q.w, q.r)}
	if s.ForcedPassword {
		return s, nil
	}
	all, err := w.app.Workspaces(q.ctx(), q.ws)
	if err != nil {
		return Shell{}, err
	}
	current := q.actor.WorkspaceID
	if current == "" {
		current = q.ws.Session.WorkspaceID
	}
	for _, m := range all {
		s.Workspaces = append(s.Workspaces, WorkspaceChoice{ID: m.Workspace.ID, Name: m.Workspace.Name, Role: m.Role})
		if m.Workspace.ID == current {
			s.WorkspaceID, s.WorkspaceName, s.Role = m.Workspace.ID, m.Workspace.Name, m.Role
		}
	}
	return s, nil
}

// Flash messages survive one redirect in a cookie holding a code, never
// text, so nobody can put words on a page through it.
var flashes = map[string]Flash{
	"key-revoked":       {Kind: FlashSuccess, Message: "The API key is revoked. It stopped working at once."},
	"role-changed":      {Kind: FlashSuccess, Message: "The role is changed. Their API keys follow it from the next request."},
	"member-removed":    {Kind: FlashSuccess, Message: "The member is removed. Their API keys lost all power here at once."},
	"invite-revoked":    {Kind: FlashSuccess, Message: "The invitation is withdrawn."},
	"password-changed":  {Kind: FlashSuccess, Message: "Your password is changed. Every other browser is signed out."},
	"password-set":      {Kind: FlashSuccess, Message: "Your password is set. Welcome to Tocsin."},
	"two-factor-off":    {Kind: FlashSuccess, Message: "Two-factor sign-in is off."},
	"signed-out":        {Kind: FlashSuccess, Message: "You are signed out."},
	"signed-out-all":    {Kind: FlashSuccess, Message: "You are signed out everywhere, this browser too."},
	"workspace-created": {Kind: FlashSuccess, Message: "The workspace is made, and you are its owner."},
	"joined":            {Kind: FlashSuccess, Message: "Welcome: you are now a member of this workspace."},
	"left":              {Kind: FlashSuccess, Message: "You left the workspace."},
	"monitor-created":   {Kind: FlashSuccess, Message: "The monitor is created. Its first check runs shortly."},
	"monitor-saved":     {Kind: FlashSuccess, Message: "The monitor is saved. Changes apply from its next check."},
	"monitor-paused":    {Kind: FlashSuccess, Message: "The monitor is paused: no checks run until you resume it."},
	"monitor-resumed":   {Kind: FlashSuccess, Message: "The monitor is resumed: its state is known again after the next check."},
	"monitor-deleted":   {Kind: FlashSuccess, Message: "The monitor is deleted."},
	"channel-created":   {Kind: FlashSuccess, Message: "The channel is created. Events go to it from now on; “Send a test” tries it."},
	"channel-saved":     {Kind: FlashSuccess, Message: "The channel is saved."},
	"channel-deleted":   {Kind: FlashSuccess, Message: "The channel is deleted. Events no longer go to it."},
	"channel-tested":    {Kind: FlashSuccess, Message: "A test event is on its way: its delivery is at the top of the log. Reload the page to see how it went."},
	"redelivered":       {Kind: FlashSuccess, Message: "The delivery goes again, with the same id. Reload the page to see how it went."},
	"heartbeat-created": {Kind: FlashSuccess, Message: "The heartbeat is created: have its job call the ping URL below."},
	"heartbeat-saved":   {Kind: FlashSuccess, Message: "The heartbeat is saved."},
	"heartbeat-paused":  {Kind: FlashSuccess, Message: "The heartbeat is paused: pings are kept but change nothing, and nothing alerts."},
	"heartbeat-resumed": {Kind: FlashSuccess, Message: "The heartbeat is resumed: it is pending until its next ping."},
	"heartbeat-deleted": {Kind: FlashSuccess, Message: "The heartbeat is deleted; its ping URL no longer works."},
	"heartbeat-rotated": {Kind: FlashSuccess, Message: "The heartbeat has a new ping URL, below; the old one no longer works."},

	// The status pages'.
	"status-page-created": {Kind: FlashSuccess, Message: "The status page is created and live at its address. Add its components below."},
	"status-page-saved":   {Kind: FlashSuccess, Message: "The status page is saved. Its readers see the change from their next visit on."},
	"status-page-deleted": {Kind: FlashSuccess, Message: "The status page is deleted. Its address answers “not found”."},
}

// The flashes of the incident and maintenance pages.
func init() {
	for code, msg := range map[string]string{
		"incident-created":      "The incident is open. Its first update is on the timeline.",
		"incident-acknowledged": "The incident is acknowledged.",
		"incident-updated":      "The update is posted.",
		"incident-resolved":     "The incident is resolved.",
		"incident-saved":        "The incident's settings are saved.",
		"maintenance-created":   "The maintenance window is created. What it covers enters maintenance within seconds of its start.",
		"maintenance-saved":     "The maintenance window is saved.",
		"maintenance-deleted":   "The maintenance window is deleted.",
	} {
		flashes[code] = Flash{Kind: FlashSuccess, Message: msg}
	}
}

func setFlash(rw http.ResponseWriter, code string) {
	http.SetCookie(rw, &http.Cookie{Name: flashCookie, Value: code, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, MaxAge: 60})
}

func (w *Server) takeFlash(rw http.ResponseWriter, r *http.Request) Flash {
	c, err := r.Cookie(flashCookie)
	if err != nil {
		return Flash{}
	}
	http.SetCookie(rw, &http.Cookie{Name: flashCookie, Value: "", Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, MaxAge: -1})
	return flashes[c.Value]
}

// The navigation's items of the incident and maintenance pages.
const (
	NavIncidents   Nav = "incidents"   // /w/{id}/incidents and below
	NavMaintenance Nav = "maintenance" // /w/{id}/maintenance and below
)
