package console

import "context"

// LiveTick runs one read of the workspace's live poller now, as its
// ticker would; false when no stream watches the workspace.
func (w *Server) LiveTick(wsID string) bool {
	w.hub.mu.Lock()
	f := w.hub.feeds[wsID]
	w.hub.mu.Unlock()
	if f == nil {
		return false
	}
	f.tick(context.Background())
	return true
}

// LiveFeeds counts the workspaces being polled.
func (w *Server) LiveFeeds() int {
	w.hub.mu.Lock()
	defer w.hub.mu.Unlock()
	return len(w.hub.feeds)
}

// AppRoutes are the web app's route patterns, from its route table.
func AppRoutes() []string {
	var out []string
	for _, rt := range (&Server{}).routeTable() {
		out = append(out, rt.pattern)
	}
	return out
}

// LiveRecheck has every open stream check its person's access now, as
// its recheck ticker would.
func (w *Server) LiveRecheck() { w.hub.recheckAll() }

// DefaultLiveRecheck is how often a stream re-checks its person's access
// when not told.
const DefaultLiveRecheck = defaultLiveRecheck

// Render renders the page of view model v, as its handler does.
func Render(v view) ([]byte, error) { return render(v) }
