package console

import "net/http"

// Workspaces is GET /workspaces (and the answer to a failed POST
// /workspaces, field "name").
type Workspaces struct {
	// Shell: set Shell.Active to NavWorkspaces.
	Shell Shell
	// List is the person's workspaces.
	List []WorkspaceChoice
	// Name re-fills the new workspace's name after an error.
	Name string
	// Errors holds the create form's messages (field "name").
	Errors FormErrors
}

func (Workspaces) template() string { return "workspaces.html" }

// root sends the person to the workspace they last worked in.
func (w *Server) root(q *request) error {
	id, err := w.app.HomeWorkspace(q.ctx(), q.ws)
	if err != nil {
		return err
	}
	if id == "" {
		http.Redirect(q.w, q.r, "/workspaces", http.StatusSeeOther)
		return nil
	}
	http.Redirect(q.w, q.r, "/w/"+id+"/", http.StatusSeeOther)
	return nil
}

func (w *Server) workspaces(q *request) error {
	return w.renderWorkspaces(q, http.StatusOK, "", FormErrors{})
}

func (w *Server) renderWorkspaces(q *request, status int, name string, fe FormErrors) error {
	return w.servePage(q, NavWorkspaces, status, func(s Shell) (view, error) {
		return Workspaces{Shell: s, List: s.Workspaces, Name: name, Errors: fe}, nil
	})
}

func (w *Server) createWorkspace(q *request) error {
	if err := q.parse(); err != nil {
		return err
	}
	name := q.r.PostForm.Get("name")
	ws, err := w.app.CreateWorkspace(q.ctx(), q.ws, name)
	if err != nil {
		if fe, ok := formErrors(err, nil); ok {
			return w.renderWorkspaces(q, statusOf(err), name, fe)
		}
		return err
	}
	return q.redirect("/w/"+ws.ID+"/", "workspace-created")
}

func (w *Server) switchWorkspace(q *request) error {
	if err := q.parse(); err != nil {
		return err
	}
	id := q.r.PostForm.Get("workspace")
	if _, err := w.app.WebActor(q.ctx(), q.ws, id); err != nil {
		return err
	}
	http.Redirect(q.w, q.r, "/w/"+id+"/", http.StatusSeeOther)
	return nil
}
