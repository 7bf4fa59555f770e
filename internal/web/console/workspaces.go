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
func (w *Server) root(q *request) {
	id, err := w.app.HomeWorkspace(q.ctx(), q.ws)
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	if id == "" {
		http.Redirect(q.w, q.r, "/workspaces", http.StatusSeeOther)
		return
	}
	http.Redirect(q.w, q.r, "/w/"+id+"/", http.StatusSeeOther)
}

func (w *Server) workspaces(q *request) { w.renderWorkspaces(q, http.StatusOK, "", FormErrors{}) }

func (w *Server) renderWorkspaces(q *request, status int, name string, fe FormErrors) {
	w.render(q, NavWorkspaces, status, func(s Shell) ([]byte, error) {
		return render(Workspaces{Shell: s, List: s.Workspaces, Name: name, Errors: fe})
	})
}

func (w *Server) createWorkspace(q *request) {
	if !q.parse() {
		return
	}
	name := q.r.PostForm.Get("name")
	ws, err := w.app.CreateWorkspace(q.ctx(), q.ws, name)
	if err != nil {
		if fe, ok := formErrors(err, nil); ok {
			w.renderWorkspaces(q, statusOf(err), name, fe)
			return
		}
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect("/w/"+ws.ID+"/", "workspace-created")
}

func (w *Server) switchWorkspace(q *request) {
	if !q.parse() {
		return
	}
	id := q.r.PostForm.Get("workspace")
	if _, err := w.app.WebActor(q.ctx(), q.ws, id); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	http.Redirect(q.w, q.r, "/w/"+id+"/", http.StatusSeeOther)
}
