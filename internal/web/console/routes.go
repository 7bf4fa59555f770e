package console

import "net/http"

// route is one line of the web app's route table: a ServeMux pattern and
// its handler.
type route struct {
	pattern string
	handler handler
}

// routeTable lists every page and form of the web app, one line each.
func (w *Server) routeTable() []route {
	return []route{
		{"GET /assets/{name}", w.asset},
		{"GET /{$}", w.signedIn(w.root)},
		{"GET /sign-in", w.signInPage},
		{"POST /sign-in", w.signIn},
		{"GET /sign-in/two-factor", w.twoFactorPage},
		{"POST /sign-in/two-factor", w.twoFactor},
		{"POST /sign-out", w.signOut},
		{"GET /account", w.signedIn(w.account)},
		{"GET /account/password", w.anySession(w.passwordPage)},
		{"POST /account/password", w.anySession(w.changePassword)},
		{"POST /account/sign-out-everywhere", w.signedIn(w.signOutEverywhere)},
		{"GET /account/two-factor/setup", w.signedIn(w.twoFactorSetupPage)},
		{"POST /account/two-factor/setup", w.signedIn(w.twoFactorSetup)},
		{"POST /account/two-factor/disable", w.signedIn(w.twoFactorDisable)},
		{"GET /workspaces", w.signedIn(w.workspaces)},
		{"POST /workspaces", w.signedIn(w.createWorkspace)},
		{"POST /switch-workspace", w.signedIn(w.switchWorkspace)},
		{"GET /w/{ws}/{$}", w.inWorkspace(w.home)},
		{"GET /w/{ws}/live", w.inWorkspace(w.live)},
		{"GET /w/{ws}/keys", w.inWorkspace(w.keys)},
		{"POST /w/{ws}/keys", w.inWorkspace(w.createKey)},
		{"POST /w/{ws}/keys/{key}/revoke", w.inWorkspace(w.revokeKey)},
		{"GET /w/{ws}/members", w.inWorkspace(w.members)},
		{"POST /w/{ws}/members/invites", w.inWorkspace(w.invite)},
		{"POST /w/{ws}/members/invites/{invite}/revoke", w.inWorkspace(w.revokeInvite)},
		{"POST /w/{ws}/members/{user}/role", w.inWorkspace(w.changeRole)},
		{"POST /w/{ws}/members/{user}/remove", w.inWorkspace(w.removeMember)},
		{"GET /w/{ws}/monitors/new", w.inWorkspace(w.newMonitor)},
		{"POST /w/{ws}/monitors", w.inWorkspace(w.createMonitor)},
		{"POST /w/{ws}/monitors/test", w.inWorkspace(w.testMonitor)},
		{"GET /w/{ws}/monitors/{id}/edit", w.inWorkspace(w.editMonitor)},
		{"POST /w/{ws}/monitors/{id}/edit", w.inWorkspace(w.updateMonitor)},
		{"GET /w/{ws}/monitors", w.inWorkspace(w.monitors)},
		{"GET /w/{ws}/monitors/{id}", w.inWorkspace(w.monitorPage)},
		{"POST /w/{ws}/monitors/{id}/pause", w.inWorkspace(w.pauseMonitor)},
		{"POST /w/{ws}/monitors/{id}/resume", w.inWorkspace(w.resumeMonitor)},
		{"POST /w/{ws}/monitors/{id}/delete", w.inWorkspace(w.deleteMonitor)},
		{"GET /w/{ws}/channels", w.inWorkspace(w.channels)},
		{"GET /w/{ws}/channels/new", w.inWorkspace(w.newChannel)},
		{"POST /w/{ws}/channels", w.inWorkspace(w.createChannel)},
		{"GET /w/{ws}/channels/{id}", w.inWorkspace(w.channelPage)},
		{"POST /w/{ws}/channels/{id}/edit", w.inWorkspace(w.updateChannel)},
		{"POST /w/{ws}/channels/{id}/delete", w.inWorkspace(w.deleteChannel)},
		{"POST /w/{ws}/channels/{id}/test", w.inWorkspace(w.testChannel)},
		{"POST /w/{ws}/channels/{id}/rotate", w.inWorkspace(w.rotateChannel)},
		{"POST /w/{ws}/deliveries/{id}/redeliver", w.inWorkspace(w.redeliver)},
		{"GET /w/{ws}/heartbeats/new", w.inWorkspace(w.newHeartbeat)},
		{"POST /w/{ws}/heartbeats", w.inWorkspace(w.createHeartbeat)},
		{"GET /w/{ws}/heartbeats/{id}/edit", w.inWorkspace(w.editHeartbeat)},
		{"POST /w/{ws}/heartbeats/{id}/edit", w.inWorkspace(w.updateHeartbeat)},
		{"GET /w/{ws}/heartbeats", w.inWorkspace(w.heartbeats)},
		{"GET /w/{ws}/heartbeats/{id}", w.inWorkspace(w.heartbeatPage)},
		{"POST /w/{ws}/heartbeats/{id}/pause", w.inWorkspace(w.pauseHeartbeat)},
		{"POST /w/{ws}/heartbeats/{id}/resume", w.inWorkspace(w.resumeHeartbeat)},
		{"POST /w/{ws}/heartbeats/{id}/delete", w.inWorkspace(w.deleteHeartbeat)},
		{"POST /w/{ws}/heartbeats/{id}/rotate", w.inWorkspace(w.rotateHeartbeat)},
		{"GET /w/{ws}/incidents", w.inWorkspace(w.incidents)},
		{"POST /w/{ws}/incidents", w.inWorkspace(w.createIncident)},
		{"GET /w/{ws}/incidents/{id}", w.inWorkspace(w.incidentPage)},
		{"POST /w/{ws}/incidents/{id}/acknowledge", w.inWorkspace(w.acknowledgeIncident)},
		{"POST /w/{ws}/incidents/{id}/updates", w.inWorkspace(w.postIncidentUpdate)},
		{"POST /w/{ws}/incidents/{id}/resolve", w.inWorkspace(w.resolveIncident)},
		{"POST /w/{ws}/incidents/{id}/edit", w.inWorkspace(w.updateIncident)},
		{"GET /w/{ws}/maintenance", w.inWorkspace(w.maintenance)},
		{"POST /w/{ws}/maintenance", w.inWorkspace(w.createMaintenance)},
		{"GET /w/{ws}/maintenance/{id}/edit", w.inWorkspace(w.editMaintenance)},
		{"POST /w/{ws}/maintenance/{id}/edit", w.inWorkspace(w.updateMaintenance)},
		{"POST /w/{ws}/maintenance/{id}/delete", w.inWorkspace(w.deleteMaintenance)},
		{"GET /w/{ws}/status-pages", w.inWorkspace(w.statusPages)},
		{"POST /w/{ws}/status-pages", w.inWorkspace(w.createStatusPage)},
		{"GET /w/{ws}/status-pages/{id}", w.inWorkspace(w.statusPageEditor)},
		{"POST /w/{ws}/status-pages/{id}", w.inWorkspace(w.saveStatusPage)},
		{"GET /w/{ws}/status-pages/{id}/preview", w.inWorkspace(w.statusPagePreview)},
		{"POST /w/{ws}/status-pages/{id}/publish", w.inWorkspace(w.publishStatusPage)},
		{"POST /w/{ws}/status-pages/{id}/unpublish", w.inWorkspace(w.unpublishStatusPage)},
		{"POST /w/{ws}/status-pages/{id}/delete", w.inWorkspace(w.deleteStatusPage)},
		{"POST /w/{ws}/status-pages/{id}/components", w.inWorkspace(w.addComponent)},
		{"POST /w/{ws}/status-pages/{id}/components/{component}/move", w.inWorkspace(w.moveComponent)},
		{"POST /w/{ws}/status-pages/{id}/components/{component}/remove", w.inWorkspace(w.removeComponent)},
		{"POST /w/{ws}/status-pages/{id}/groups", w.inWorkspace(w.addGroup)},
		{"POST /w/{ws}/status-pages/{id}/groups/{group}/move", w.inWorkspace(w.moveGroup)},
		{"POST /w/{ws}/status-pages/{id}/groups/{group}/remove", w.inWorkspace(w.removeGroup)},
		{"POST /w/{ws}/status-pages/{id}/order", w.inWorkspace(w.reorderComponents)},
		{"POST /w/{ws}/status-pages/{id}/logo", w.inWorkspace(w.uploadLogo)},
		{"POST /w/{ws}/status-pages/{id}/logo/remove", w.inWorkspace(w.removeLogo)},
		{"GET /invite/{token}", w.invitePage},
		{"POST /invite/{token}", w.acceptInvite},
		{"/", w.notFound},
	}
}

func (w *Server) routes(mux *http.ServeMux) {
	for _, rt := range w.routeTable() {
		mux.HandleFunc(rt.pattern, w.handle(rt.handler))
	}
}
