package console

import "net/http"

// WorkspaceHome is GET /w/{id}/: the current workspace is the Shell's.
// What the role may do is worked out from Shell.Role.
type WorkspaceHome struct {
	// Shell: set Shell.Active to NavHome.
	Shell Shell
	// Members is how many people belong to the workspace.
	Members int
	// ActiveKeys is how many active API keys the person holds that work
	// in the workspace.
	ActiveKeys int
}

func (WorkspaceHome) template() string { return "home.html" }

func (w *Server) home(q *request) error {
	return w.servePage(q, NavHome, http.StatusOK, func(s Shell) (view, error) {
		members, err := w.app.Members(q.ctx(), q.actor)
		if err != nil {
			return nil, err
		}
		keys, err := w.app.ListKeys(q.ctx(), q.actor)
		if err != nil {
			return nil, err
		}
		active := 0
		for _, k := range keys.Mine {
			if k.Key.RevokedAt.IsZero() {
				active++
			}
		}
		return WorkspaceHome{Shell: s, Members: len(members), ActiveKeys: active}, nil
	})
}
