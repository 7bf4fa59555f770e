package notify_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/notify"
)

// A channel hears the event types and subjects it names (none named: all),
// and nothing while disabled.
func TestHears(t *testing.T) {
	c := notify.Channel{Enabled: true}
	if !c.Hears(incident.IncidentOpened, []string{"mon_a"}) {
		t.Error("a channel naming nothing hears everything")
	}
	c.Events, c.Subjects = []string{incident.IncidentOpened}, []string{"mon_a", "hb_b"}
	for _, tc := range []struct {
		typ      string
		subjects []string
		want     bool
	}{
		{incident.IncidentOpened, []string{"mon_a"}, true},
		{incident.IncidentOpened, []string{"mon_x", "hb_b"}, true}, // an affected one
		{incident.IncidentOpened, []string{"mon_x"}, false},
		{incident.IncidentResolved, []string{"mon_a"}, false},
	} {
		if got := c.Hears(tc.typ, tc.subjects); got != tc.want {
			t.Errorf("Hears(%s, %v) = %v", tc.typ, tc.subjects, got)
		}
	}
	c.Enabled = false
	if c.Hears(incident.IncidentOpened, []string{"mon_a"}) {
		t.Error("a disabled channel hears")
	}
}

// Rotating keeps the old secret signing for the grace period, then only
// the new one; a second rotation drops the oldest.
func TestRotate(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var s notify.Secrets
	first := s.Rotate(now)
	if got := s.Active(now); !slices.Equal(got, []string{first}) {
		t.Fatalf("after the first: %v", got)
	}
	second := s.Rotate(now.Add(time.Hour))
	if got := s.Active(now.Add(2 * time.Hour)); !slices.Equal(got, []string{second, first}) {
		t.Errorf("during the grace: %v", got)
	}
	if got := s.Active(now.Add(time.Hour + notify.RotationGrace)); !slices.Equal(got, []string{second}) {
		t.Errorf("after the grace: %v", got)
	}
	third := s.Rotate(now.Add(3 * time.Hour))
	if got := s.Active(now.Add(3 * time.Hour)); !slices.Equal(got, []string{third, second}) {
		t.Errorf("after a second rotation: %v", got)
	}
	if !slices.Equal(s.Set(), []string{"signingSecret"}) {
		t.Errorf("set: %v", s.Set())
	}
}

func TestValidate(t *testing.T) {
	c := &notify.Channel{Name: "x", Kind: notify.Email, Config: notify.Config{To: []string{"Ops <ops@example.com>", "bad"}, Topic: "t"}}
	var ptrs []string
	for _, f := range notify.Validate(c, &notify.Secrets{}) {
		ptrs = append(ptrs, f.Pointer)
	}
	if !slices.Equal(ptrs, []string{"/config/topic", "/config/to/0", "/config/to/1"}) {
		t.Errorf("pointers %v", ptrs)
	}
}

// A URL's query is parted from what is shown, and joined again for the
// delivery, fragment and all.
func TestSplitJoinURL(t *testing.T) {
	for _, c := range []struct {
		raw, shown, query string
		written           bool
	}{
		{"https://h.test/hook", "https://h.test/hook", "", false},
		{"https://h.test/hook?token=a&b=c", "https://h.test/hook", "token=a&b=c", true},
		{"https://h.test/hook?", "https://h.test/hook", "", true},
		{"https://h.test/hook?t=1#frag", "https://h.test/hook#frag", "t=1", true},
		{"https://h.test/hook#frag?not-a-query", "https://h.test/hook#frag?not-a-query", "", false},
	} {
		shown, query, written := notify.SplitURL(c.raw)
		if shown != c.shown || query != c.query || written != c.written {
			t.Errorf("notify.SplitURL(%q) = %q, %q, %v", c.raw, shown, query, written)
		}
		if c.query != "" || !c.written {
			if got := notify.JoinURL(shown, query); got != c.raw {
				t.Errorf("notify.JoinURL(%q, %q) = %q, want %q", shown, query, got, c.raw)
			}
		}
	}
}

// Redact hides every secret a receiver might echo, the query whole or
// value by value, escaped or not.
func TestRedact(t *testing.T) {
	s := &notify.Secrets{URLQuery: "token=abc%2Fdef&team=ops-team", HookURL: "https://hooks.slack.com/services/T0/B0/slacksecret", BotToken: "1:bot"}
	for _, msg := range []string{"got /hook?token=abc%2Fdef&team=ops-team", "token abc/def", "token=abc%2Fdef", "team ops-team",
		"no route /services/T0/B0/slacksecret", "bot 1:bot"} {
		got := s.Redact(msg)
		for _, secret := range []string{"abc%2Fdef", "abc/def", "ops-team", "slacksecret", "1:bot"} {
			if strings.Contains(got, secret) {
				t.Errorf("Redact(%q) = %q", msg, got)
			}
		}
	}
	if got := (*notify.Secrets)(nil).Redact("plain"); got != "plain" {
		t.Errorf("nil secrets: %q", got)
	}
}
