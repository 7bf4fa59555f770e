package monitor_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/monitor"
)

func TestKindOf(t *testing.T) {
	invalid := &monitor.Error{Kind: monitor.KindInvalid, Message: "bad"}
	wrapped := error(monitor.ErrNotFound)
	monitor.Wrap(&wrapped, "store.GetMonitor(%s)", "mon_1")
	cases := []struct {
		name string
		err  error
		want monitor.Kind
	}{
		{"nil", nil, monitor.KindInternal},
		{"plain error", errors.New("boom"), monitor.KindInternal},
		{"io.EOF", io.EOF, monitor.KindInternal},
		{"*Error", invalid, monitor.KindInvalid},
		{"ErrNotFound", monitor.ErrNotFound, monitor.KindNotFound},
		{"Errorf", monitor.Errorf(monitor.KindQuota, "at most %d monitors", 3), monitor.KindQuota},
		{"wrapped with %w", fmt.Errorf("ctx: %w", invalid), monitor.KindInvalid},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", monitor.Errorf(monitor.KindRateLimited, "slow"))), monitor.KindRateLimited},
		{"wrapped with Wrap", wrapped, monitor.KindNotFound},
		{"joined", errors.Join(errors.New("other"), invalid), monitor.KindInvalid},
		{"wrapped with %v loses the kind", fmt.Errorf("ctx: %v", invalid), monitor.KindInternal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := monitor.KindOf(c.err); got != c.want {
				t.Errorf("KindOf(%v) = %v, want %v", c.err, got, c.want)
			}
		})
	}
}

func TestWrap(t *testing.T) {
	base := errors.New("disk on fire")
	cases := []struct {
		name    string
		err     error
		format  string
		args    []any
		wantMsg string // "" means the error must stay nil
	}{
		{"nil stays nil", nil, "store.GetMonitor(%s)", []any{"mon_1"}, ""},
		{"annotates", base, "store.GetMonitor(%s)", []any{"mon_1"}, "store.GetMonitor(mon_1): disk on fire"},
		{"no args", base, "migrate", nil, "migrate: disk on fire"},
		{"percent in an argument is not re-interpreted", base, "get(%s)", []any{"100%d"}, "get(100%d): disk on fire"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.err
			monitor.Wrap(&err, c.format, c.args...)
			if c.wantMsg == "" {
				if err != nil {
					t.Fatalf("Wrap made %v from nil", err)
				}
				return
			}
			if err == nil || err.Error() != c.wantMsg {
				t.Fatalf("Wrap = %v, want %q", err, c.wantMsg)
			}
			if !errors.Is(err, c.err) {
				t.Error("Wrap broke the chain: errors.Is fails")
			}
		})
	}
}

// TestWrapDeferred is the documented use: defer monitor.Wrap(&err, …).
func TestWrapDeferred(t *testing.T) {
	get := func(id string, fail bool) (err error) {
		defer monitor.Wrap(&err, "store.GetMonitor(%s)", id)
		if fail {
			return monitor.ErrNotFound
		}
		return nil
	}
	if err := get("mon_1", false); err != nil {
		t.Fatalf("success became %v", err)
	}
	err := get("mon_2", true)
	if !errors.Is(err, monitor.ErrNotFound) || monitor.KindOf(err) != monitor.KindNotFound {
		t.Fatalf("deferred Wrap lost the kind: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "store.GetMonitor(mon_2): ") {
		t.Errorf("deferred Wrap message = %q", err)
	}
}

func TestErrorMessage(t *testing.T) {
	cases := []struct {
		name string
		err  *monitor.Error
		want string
	}{
		{"no fields", &monitor.Error{Kind: monitor.KindForbidden, Message: "no"}, "no"},
		{"fields", &monitor.Error{Kind: monitor.KindInvalid, Message: "invalid monitor", Fields: []monitor.FieldError{
			{Pointer: "/name", Message: "must not be empty"},
			{Pointer: "/config/url", Message: "is required"},
		}}, "invalid monitor (2 field errors, first /name: must not be empty)"},
		{"Errorf formats", monitor.Errorf(monitor.KindQuota, "at most %d monitors", 5), "at most 5 monitors"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%s: Error() = %q, want %q", c.name, got, c.want)
		}
	}
}
