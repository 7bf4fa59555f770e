package console

import (
	"errors"
	"net/url"
	"strings"

	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
)

// posted is a submitted form whose text is judged where it enters: a
// value that is not valid UTF-8 without NUL is a field error and reads
// as empty, so it never goes on.
type posted struct {
	f url.Values
	unread
}

func (q *request) posted() (*posted, bool) {
	if !q.parse() {
		return nil, false
	}
	return &posted{f: q.r.PostForm}, true
}

// unread holds a form's fields that could not be read, by form field
// name, each with its first message.
type unread struct {
	bad map[string]string
}

func (u *unread) fail(name, msg string) {
	if u.bad == nil {
		u.bad = map[string]string{}
	}
	if _, dup := u.bad[name]; !dup {
		u.bad[name] = msg
	}
}

// The message of a field whose text is not valid UTF-8 without NUL: whole
// (invalidText), or to follow the field's label (unreadText).
const (
	invalidText = "Must be valid UTF-8 text without NUL."
	unreadText  = "must be valid UTF-8 text without NUL"
)

// text is f's field name, or "" and the field's message msg when it is not
// valid UTF-8 without NUL.
func (u *unread) text(f url.Values, name, msg string) string {
	v := f.Get(name)
	if !clean.Valid(v) {
		u.fail(name, msg)
		return ""
	}
	return v
}

// judged is f with every value that is not valid UTF-8 without NUL made
// empty, its field given the message msg: for a form that reads many
// fields, judged once where it enters.
func (u *unread) judged(f url.Values, msg string) url.Values {
	out := make(url.Values, len(f))
	for name, vs := range f {
		if !clean.Valid(name) {
			continue // no field of ours
		}
		kept := make([]string, len(vs))
		for i, v := range vs {
			if clean.Valid(v) {
				kept[i] = v
			} else {
				u.fail(name, msg)
			}
		}
		out[name] = kept
	}
	return out
}

// list is f's values of field name but those that are not valid UTF-8
// without NUL, which give the field the message msg.
func (u *unread) list(f url.Values, name, msg string) []string {
	var out []string
	for _, v := range f[name] {
		if !clean.Valid(v) {
			u.fail(name, msg)
			continue
		}
		out = append(out, v)
	}
	return out
}

func (p *posted) get(name string) string { return p.text(p.f, name, invalidText) }

func (p *posted) list(name string) []string { return p.unread.list(p.f, name, invalidText) }

// errors are the form's messages: the unreadable fields, and err's (nil
// for none) mapped by fieldOf; ok is false when err is not the person's
// to fix.
func (p *posted) errors(err error, fieldOf map[string]string) (FormErrors, bool) {
	fe := FormErrors{}
	if err != nil {
		var ok bool
		if fe, ok = formErrors(err, fieldOf); !ok || errs.KindOf(err) != errs.KindInvalid {
			return fe, false
		}
	}
	for name, msg := range p.bad {
		if fe.Fields == nil {
			fe.Fields = map[string]string{}
		}
		fe.Fields[name] = msg
	}
	return fe, true
}

// appFieldErrors are a form's messages for an app error: the fields in
// bad (those that could not be read), then each of err's fields at the
// form field fieldOf names for its pointer, unless bad has it already; a
// field it names none ("") is listed in the summary. message words each
// field's message.
func appFieldErrors(err error, bad map[string]string, fieldOf func(pointer string) string, message func(name, msg string) string) FormErrors {
	fe := FormErrors{Fields: map[string]string{}}
	for name, msg := range bad {
		fe.Fields[name] = msg
	}
	var e *errs.Error
	if !errors.As(err, &e) {
		return fe
	}
	var loose []string
	for _, f := range e.Fields {
		name := fieldOf(f.Pointer)
		if name == "" {
			loose = append(loose, f.Pointer+" "+f.Message)
			continue
		}
		if _, dup := fe.Fields[name]; !dup {
			fe.Fields[name] = f.Message
		}
	}
	for name, msg := range fe.Fields {
		fe.Fields[name] = message(name, msg)
	}
	switch {
	case len(loose) > 0:
		fe.Summary = "Please correct the marked fields: " + strings.Join(loose, "; ") + "."
	case len(e.Fields) == 0:
		fe.Summary = e.Message
	}
	return fe
}

// invalidFields is the app's error for problems found without it.
func invalidFields(problems []errs.FieldError) error {
	if len(problems) == 0 {
		return nil
	}
	return &errs.Error{Kind: errs.KindInvalid, Message: "the request has invalid fields", Fields: problems}
}
