package console

import (
	"net/http"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
)

// Members is GET /w/{id}/members and the answer to a failed POST there.
type Members struct {
	// Shell: set Shell.Active to NavMembers; owners and admins
	// (Shell.Role) get the forms to change roles, remove people and
	// invite.
	Shell Shell
	// Members are the workspace's members.
	Members []MemberRow
	// Invites are the pending invitations (shown to owners and admins).
	Invites []InviteRow
	// InviteRole re-fills the invite form's field "role" (default viewer).
	InviteRole account.Role
	// Errors holds the invite form's messages (field "role").
	Errors FormErrors
}

func (Members) template() string { return "members.html" }

// MemberRow is one member of the workspace.
type MemberRow struct {
	// UserID is the member's user id, in /w/{id}/members/{userID}/….
	UserID string
	// Email is the member's e-mail.
	Email string
	// Role is their role.
	Role account.Role
	// JoinedAt is when they joined.
	JoinedAt time.Time
	// You marks the person viewing the page.
	You bool
}

// InviteRow is one pending invitation.
type InviteRow struct {
	// ID is the invitation's id, in /w/{id}/members/invites/{inviteID}/revoke.
	ID string
	// Role is the role it grants.
	Role account.Role
	// CreatedAt is when it was made.
	CreatedAt time.Time
	// ExpiresAt is when it stops working.
	ExpiresAt time.Time
	// CreatedBy is the e-mail of who made it.
	CreatedBy string
}

// InviteCreated is the answer to a successful POST
// /w/{id}/members/invites: the link, shown once.
type InviteCreated struct {
	// Shell: set Shell.Active to NavMembers.
	Shell Shell
	// Link is the invitation's full URL (BaseURL + "/invite/" + token).
	Link string
	// Role is the role it grants.
	Role account.Role
	// ExpiresAt is when it stops working.
	ExpiresAt time.Time
}

func (InviteCreated) template() string { return "invite_created.html" }

func (w *Server) members(q *request) error {
	return w.renderMembers(q, http.StatusOK, account.RoleViewer, FormErrors{})
}

func (w *Server) renderMembers(q *request, status int, role account.Role, fe FormErrors) error {
	return w.servePage(q, NavMembers, status, func(s Shell) (view, error) {
		members, err := w.app.Members(q.ctx(), q.actor)
		if err != nil {
			return nil, err
		}
		v := Members{Shell: s, InviteRole: role, Errors: fe}
		emails := map[string]string{}
		for _, m := range members {
			emails[m.UserID] = m.Email
			v.Members = append(v.Members, MemberRow{UserID: m.UserID, Email: m.Email, Role: m.Role, JoinedAt: m.JoinedAt,
				You: m.UserID == q.ws.User.ID})
		}
		if q.actor.Role.ManagesKeys() {
			invites, err := w.app.PendingInvites(q.ctx(), q.actor)
			if err != nil {
				return nil, err
			}
			for _, inv := range invites {
				v.Invites = append(v.Invites, InviteRow{ID: inv.ID, Role: inv.Role, CreatedAt: inv.CreatedAt,
					ExpiresAt: inv.ExpiresAt, CreatedBy: emails[inv.CreatedBy]})
			}
		}
		return v, nil
	})
}

func (w *Server) invite(q *request) error {
	if err := q.parse(); err != nil {
		return err
	}
	role := q.r.PostForm.Get("role")
	inv, err := w.app.Invite(q.ctx(), q.actor, role)
	if err != nil {
		if fe, ok := formErrors(err, nil); ok {
			r, _ := account.ParseRole(role)
			return w.renderMembers(q, statusOf(err), r, fe)
		}
		return err
	}
	return w.servePage(q, NavMembers, http.StatusCreated, func(s Shell) (view, error) {
		return InviteCreated{Shell: s, Link: w.base + "/invite/" + inv.Token,
			Role: inv.Invite.Role, ExpiresAt: inv.Invite.ExpiresAt}, nil
	})
}

func (w *Server) revokeInvite(q *request) error {
	if err := w.app.RevokeInvite(q.ctx(), q.actor, q.r.PathValue("invite")); err != nil {
		return err
	}
	return q.redirect("/w/"+q.actor.WorkspaceID+"/members", "invite-revoked")
}

func (w *Server) changeRole(q *request) error {
	if err := q.parse(); err != nil {
		return err
	}
	if err := w.app.ChangeRole(q.ctx(), q.actor, q.r.PathValue("user"), q.r.PostForm.Get("role")); err != nil {
		return w.memberFailed(q, err)
	}
	return q.redirect("/w/"+q.actor.WorkspaceID+"/members", "role-changed")
}

func (w *Server) removeMember(q *request) error {
	user := q.r.PathValue("user")
	if err := w.app.RemoveMember(q.ctx(), q.actor, user); err != nil {
		return w.memberFailed(q, err)
	}
	w.hub.endMember(user, q.actor.WorkspaceID)
	if user == q.ws.User.ID {
		return q.redirect("/", "left")
	}
	return q.redirect("/w/"+q.actor.WorkspaceID+"/members", "member-removed")
}

// memberFailed shows why a change to a member was refused on the members
// page itself (the last owner, a role only owners give).
func (w *Server) memberFailed(q *request, err error) error {
	if k := errs.KindOf(err); k == errs.KindConflict || k == errs.KindInvalid || (k == errs.KindForbidden && q.actor.Role.ManagesKeys()) {
		fe, _ := formErrors(err, map[string]string{"role": "member-role"})
		for _, m := range fe.Fields {
			if fe.Summary == "" {
				fe.Summary = m
			}
		}
		return w.renderMembers(q, statusOf(err), account.RoleViewer, FormErrors{Summary: fe.Summary})
	}
	return err
}
