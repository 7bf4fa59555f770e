package console

import (
	"net/http"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
)

// Keys is GET /w/{id}/keys and the answer to a failed POST /w/{id}/keys.
type Keys struct {
	// Shell: set Shell.Active to NavKeys; Shell.Role decides which scopes
	// may be chosen and whether Others is shown.
	Shell Shell
	// Mine are the person's own keys that work in this workspace.
	Mine []KeyRow
	// Others are other members' keys in this workspace, shown only to
	// owners and admins (who may revoke them).
	Others []KeyRow
	// Form re-fills the create form.
	Form KeyForm
	// Errors holds the create form's messages ("name", "binding",
	// "scope").
	Errors FormErrors
}

func (Keys) template() string { return "keys.html" }

// KeyRow is one API key in a key list.
type KeyRow struct {
	// ID is the key's id, in /w/{id}/keys/{keyID}/revoke.
	ID string
	// Name is the name its creator gave it.
	Name string
	// Prefix is the first characters of the secret ("tsk_AbC123"); shown
	// followed by "…".
	Prefix string
	// Scopes are the key's scopes.
	Scopes []account.Scope
	// AccountWide is set for a key that works in every workspace of its
	// creator (sent with X-Workspace-Id); clear for a key bound to this
	// workspace.
	AccountWide bool
	// CreatorEmail is the e-mail of the person who created it.
	CreatorEmail string
	// CreatedAt is when it was created.
	CreatedAt time.Time
	// LastUsedAt is when it was last used; zero shows "never".
	LastUsedAt time.Time
	// RevokedAt is when it was revoked; zero for an active key (which
	// gets a revoke form, when the viewer may revoke it).
	RevokedAt time.Time
}

// Binding values of the key form's "binding" radio.
const (
	BindingWorkspace = "workspace" // only this workspace
	BindingAccount   = "account"   // every workspace of the creator
)

// KeyForm is what the create-key form shows (and re-fills).
type KeyForm struct {
	// Name re-fills field "name".
	Name string
	// Binding re-fills radio "binding": BindingWorkspace (the default
	// when empty) or BindingAccount.
	Binding string
	// Scopes re-fills the checked "scope" boxes.
	Scopes []account.Scope
}

// KeyCreated is the answer to a successful POST /w/{id}/keys: the secret,
// shown only now.
type KeyCreated struct {
	// Shell: set Shell.Active to NavKeys; Shell.BaseURL and
	// Shell.WorkspaceID go into the curl example.
	Shell Shell
	// Name is the new key's name.
	Name string
	// Secret is the key's secret (tsk_…), shown once.
	Secret string
	// Scopes are its scopes.
	Scopes []account.Scope
	// AccountWide is set for an account-wide key: the example then sends
	// X-Workspace-Id.
	AccountWide bool
}

func (KeyCreated) template() string { return "key_created.html" }

// keyTable is a list of keys for the "keytable" template; the creator's
// column is only in the list of other members' keys (one's own keys are
// one's own).
type keyTable struct {
	WorkspaceID, Caption string
	Rows                 []KeyRow
	ShowCreator          bool
}

func (w *Server) keys(q *request) error {
	return w.renderKeys(q, http.StatusOK, KeyForm{}, FormErrors{})
}

func keyRows(in []account.KeyListing) []KeyRow {
	out := make([]KeyRow, 0, len(in))
	for _, k := range in {
		out = append(out, KeyRow{ID: k.Key.ID, Name: k.Key.Name, Prefix: k.Key.Prefix, Scopes: k.Key.Scopes,
			AccountWide: k.Key.WorkspaceID == "", CreatorEmail: k.CreatorEmail, CreatedAt: k.Key.CreatedAt,
			LastUsedAt: k.Key.LastUsedAt, RevokedAt: k.Key.RevokedAt})
	}
	return out
}

func (w *Server) renderKeys(q *request, status int, form KeyForm, fe FormErrors) error {
	return w.servePage(q, NavKeys, status, func(s Shell) (view, error) {
		keys, err := w.app.ListKeys(q.ctx(), q.actor)
		if err != nil {
			return nil, err
		}
		return Keys{Shell: s, Mine: keyRows(keys.Mine), Others: keyRows(keys.Others), Form: form, Errors: fe}, nil
	})
}

func (w *Server) createKey(q *request) error {
	if err := q.parse(); err != nil {
		return err
	}
	f := q.r.PostForm
	form := KeyForm{Name: f.Get("name"), Binding: f.Get("binding")}
	for _, s := range f["scope"] {
		form.Scopes = append(form.Scopes, account.Scope(s))
	}
	req := app.KeyRequest{Name: form.Name, Scopes: form.Scopes}
	switch form.Binding {
	case BindingWorkspace, "":
		req.WorkspaceID = q.actor.WorkspaceID
	case BindingAccount:
	default:
		return w.renderKeys(q, http.StatusUnprocessableEntity, form, FormErrors{Fields: map[string]string{"binding": "must be this workspace or every workspace"}})
	}
	k, err := w.app.CreateKey(q.ctx(), q.actor, req)
	if err != nil {
		fe, ok := formErrors(err, map[string]string{"scopes": "scope"})
		if !ok {
			return err
		}
		if errs.KindOf(err) == errs.KindForbidden {
			fe.Fields = map[string]string{"scope": fe.Summary}
		}
		return w.renderKeys(q, statusOf(err), form, fe)
	}
	return w.servePage(q, NavKeys, http.StatusCreated, func(s Shell) (view, error) {
		return KeyCreated{Shell: s, Name: k.Key.Name, Secret: k.Secret, Scopes: k.Key.Scopes,
			AccountWide: k.Key.WorkspaceID == ""}, nil
	})
}

func (w *Server) revokeKey(q *request) error {
	if err := w.app.RevokeKeyAs(q.ctx(), q.actor, q.r.PathValue("key")); err != nil {
		return err
	}
	return q.redirect("/w/"+q.actor.WorkspaceID+"/keys", "key-revoked")
}
