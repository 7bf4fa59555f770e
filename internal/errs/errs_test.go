package errs_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/errs"
)

func TestKindOf(t *testing.T) {
	invalid := &errs.Error{Kind: errs.KindInvalid, Message: "bad"}
	wrapped := error(errs.ErrNotFound)
	errs.Wrap(&wrapped, "store.GetMonitor(%s)", "mon_1")
	cases := []struct {
		name string
		err  error
		want errs.Kind
	}{
		{"nil", nil, errs.KindInternal},
		{"plain error", errors.New("boom"), errs.KindInternal},
		{"io.EOF", io.EOF, errs.KindInternal},
		{"*Error", invalid, errs.KindInvalid},
		{"ErrNotFound", errs.ErrNotFound, errs.KindNotFound},
		{"Errorf", errs.Errorf(errs.KindQuota, "at most %d monitors", 3), errs.KindQuota},
		{"wrapped with %w", fmt.Errorf("ctx: %w", invalid), errs.KindInvalid},
		{"wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", errs.Errorf(errs.KindRateLimited, "slow"))), errs.KindRateLimited},
		{"wrapped with Wrap", wrapped, errs.KindNotFound},
		{"joined", errors.Join(errors.New("other"), invalid), errs.KindInvalid},
		{"wrapped with %v loses the kind", fmt.Errorf("ctx: %v", invalid), errs.KindInternal},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := errs.KindOf(c.err); got != c.want {
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
			errs.Wrap(&err, c.format, c.args...)
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

// TestWrapDeferred is the documented use: defer errs.Wrap(&err, …).
func TestWrapDeferred(t *testing.T) {
	get := func(id string, fail bool) (err error) {
		defer errs.Wrap(&err, "store.GetMonitor(%s)", id)
		if fail {
			return errs.ErrNotFound
		}
		return nil
	}
	if err := get("mon_1", false); err != nil {
		t.Fatalf("success became %v", err)
	}
	err := get("mon_2", true)
	if !errors.Is(err, errs.ErrNotFound) || errs.KindOf(err) != errs.KindNotFound {
		t.Fatalf("deferred Wrap lost the kind: %v", err)
	}
	if !strings.HasPrefix(err.Error(), "store.GetMonitor(mon_2): ") {
		t.Errorf("deferred Wrap message = %q", err)
	}
}

func TestErrorMessage(t *testing.T) {
	cases := []struct {
		name string
		err  *errs.Error
		want string
	}{
		{"no fields", &errs.Error{Kind: errs.KindForbidden, Message: "no"}, "no"},
		{"fields", &errs.Error{Kind: errs.KindInvalid, Message: "invalid monitor", Fields: []errs.FieldError{
			{Pointer: "/name", Message: "must not be empty"},
			{Pointer: "/config/url", Message: "is required"},
		}}, "invalid monitor (2 field errors, first /name: must not be empty)"},
		{"Errorf formats", errs.Errorf(errs.KindQuota, "at most %d monitors", 5), "at most 5 monitors"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%s: Error() = %q, want %q", c.name, got, c.want)
		}
	}
}
