package console_test

import (
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/web/console"
)

// TestLiveAttribute: a page that follows changes names its stream on
// <main>, escaped; other pages name none.
func TestLiveAttribute(t *testing.T) {
	s := shell(console.NavHome)
	s.Live = "/w/" + wsID + "/live"
	b, err := console.Render(console.WorkspaceHome{Shell: s})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `tabindex="-1" data-live="/w/`+wsID+`/live">`) {
		t.Errorf("no data-live on <main>:\n%s", b)
	}
	s.Live = `/w/x"><script>`
	if b, _ = console.Render(console.WorkspaceHome{Shell: s}); strings.Contains(string(b), `"><script>`) {
		t.Error("data-live is not escaped")
	}
	s.Live = ""
	if b, _ = console.Render(console.WorkspaceHome{Shell: s}); strings.Contains(string(b), "data-live") {
		t.Error("data-live without a stream")
	}
}
