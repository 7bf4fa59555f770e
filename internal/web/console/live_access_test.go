package console_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/web/console"
	"github.com/tocsin/tocsin/internal/web/public"
)

// postAt posts a form as p, to the server at base.
func postAt(t *testing.T, p *person, base, path string, form url.Values) int {
	t.Helper()
	req, err := http.NewRequest("POST", base+path, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := p.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// wantEnd reads s until it ends, and wants it to say so first.
func wantEnd(t *testing.T, s *stream, what string) {
	t.Helper()
	for {
		ev, ok := s.next(t)
		if !ok {
			t.Fatalf("%s: the stream closed without its end event", what)
		}
		if ev.name == "end" {
			if ev, ok := s.next(t); ok {
				t.Fatalf("%s: an event after the end: %+v", what, ev)
			}
			return
		}
	}
}

// stillOpen wants nothing to have come on s yet.
func stillOpen(t *testing.T, s *stream, what string) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		t.Errorf("%s: the stream had %+v (open %v) before its recheck", what, ev, ok)
	default:
	}
}

// TestLiveEndsWithAccess: removing a member, a new password and "sign out
// everywhere" end the person's live streams at once on the node that made
// the change, every stream of theirs there; another node's streams end at
// their recheck (every 5 s; here the test runs it); and other people's
// streams go on. Neither node rechecks by itself during the test, so only
// the change can end a stream. Both engines.
func TestLiveEndsWithAccess(t *testing.T) {
	if console.DefaultLiveRecheck > 5*time.Second {
		t.Errorf("streams recheck every %v, more than 5 s", console.DefaultLiveRecheck)
	}
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		opts := console.Options{LivePoll: time.Hour, LiveRecheck: time.Hour}
		node, here := liveServer(t, e.App, opts)
		other, there := liveServer(t, e.App, opts)
		ws := "/w/" + e.WsA.ID
		mon := e.Monitor(e.KeyA, "db", "http://db.invalid/", nil)
		owner := e.member("boss@a.test", account.RoleOwner)
		bystander := e.member("bystander@a.test", account.RoleViewer)
		watch := func(p *person, base string) *stream {
			t.Helper()
			s := openStream(t, p.c, base, ws+"/live")
			s.snapshot(t)
			return s
		}
		b := watch(bystander, here)

		// Removed from the workspace.
		viewer := e.member("viewer@a.test", account.RoleViewer)
		v1, v2, v3 := watch(viewer, here), watch(viewer, here), watch(viewer, there)
		if st := postAt(t, owner, here, ws+"/members/"+e.userID("viewer@a.test")+"/remove", url.Values{}); st != http.StatusSeeOther {
			t.Fatalf("remove: %d", st)
		}
		wantEnd(t, v1, "removed, this node")
		wantEnd(t, v2, "removed, this node, a second tab")
		stillOpen(t, v3, "removed, another node")
		other.LiveRecheck()
		wantEnd(t, v3, "removed, another node")

		// A new password, from one of two browsers.
		pw := e.member("pw@a.test", account.RoleEditor)
		pw2 := e.browser("pw@a.test")
		pw2.signIn("a password for pw@a.test")
		p1, p2, p3 := watch(pw, here), watch(pw2, here), watch(pw2, there)
		if st := postAt(t, pw, here, "/account/password", form("current", "a password for pw@a.test",
			"new", "a brand new password", "confirm", "a brand new password")); st != http.StatusSeeOther {
			t.Fatalf("change password: %d", st)
		}
		wantEnd(t, p1, "new password, the browser that changed it")
		wantEnd(t, p2, "new password, another browser")
		stillOpen(t, p3, "new password, another node")
		other.LiveRecheck()
		wantEnd(t, p3, "new password, another node")

		// Signed out everywhere.
		all := e.member("all@a.test", account.RoleAdmin)
		all2 := e.browser("all@a.test")
		all2.signIn("a password for all@a.test")
		a1, a2, a3 := watch(all, here), watch(all2, here), watch(all2, there)
		if st := postAt(t, all, here, "/account/sign-out-everywhere", url.Values{}); st != http.StatusSeeOther {
			t.Fatalf("sign out everywhere: %d", st)
		}
		wantEnd(t, a1, "signed out everywhere, this browser")
		wantEnd(t, a2, "signed out everywhere, another browser")
		stillOpen(t, a3, "signed out everywhere, another node")
		other.LiveRecheck()
		wantEnd(t, a3, "signed out everywhere, another node")

		// The bystander watches on, and a recheck leaves them be.
		node.LiveRecheck()
		e.Record(mon, "refused", monitor.ResultDown, monitor.ResultDown, monitor.ResultDown)
		if !node.LiveTick(e.WsA.ID) {
			t.Fatal("no poller for the bystander")
		}
		if st := b.stateOf(t, mon); st.State != "DOWN" {
			t.Errorf("the bystander's stream: %+v", st)
		}
	})
}
