package console

// RenderStatusPages renders GET /w/{ws}/status-pages.
func RenderStatusPages(v StatusPages) ([]byte, error) { return execute("statuspages.html", v) }

// RenderStatusPageEditor renders GET /w/{ws}/status-pages/{id}. Serve it
// with EditorCSP: its preview is a frame of this site.
func RenderStatusPageEditor(v StatusPageEditor) ([]byte, error) {
	return execute("statuspage_editor.html", v)
}

// EditorCSP is CSP with frames of the app's own pages allowed: the status
// page editor shows its preview in one.
const EditorCSP = CSP + "; frame-src 'self'"
