package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
)

// FormErrors is what went wrong with a submitted form: a message per
// field and a summary for the top of the form. The zero value is no
// error.
type FormErrors struct {
	// Summary is the error summary shown at the top of the form
	// (role="alert"). When it is empty and Fields is not, the summary
	// says "Please correct the marked fields."; a form-wide error (such
	// as "Wrong e-mail or password.") is a Summary without Fields.
	Summary string
	// Fields maps a form field's name ("email", "name", "scope"…) to its
	// message, shown under the field and tied to it with
	// aria-describedby.
	Fields map[string]string
}

// Any reports whether there is an error to show.
func (e FormErrors) Any() bool { return e.Summary != "" || len(e.Fields) > 0 }

// Field is the message for one field, "" when it has none.
func (e FormErrors) Field(name string) string { return e.Fields[name] }

// SummaryText is the summary to show: Summary, or a generic sentence when
// only fields are wrong.
func (e FormErrors) SummaryText() string {
	if e.Summary != "" {
		return e.Summary
	}
	if len(e.Fields) > 0 {
		return "Please correct the marked fields."
	}
	return ""
}

// field is one labelled input of a form, for the templates of
// parts.html ("field" is a required "input"). Note is said after the
// label, muted ("optional"); Spell is the input's spellcheck.
type field struct {
	Name, Label, Note, Type, Value, Auto, Spell, Hint, Mode string
	Errors                                                  FormErrors
	Required                                                bool
}

// Mandatory is the field as a required input.
func (f field) Mandatory() field {
	f.Required = true
	return f
}

// newField builds a field from name/value pairs.
func newField(kv ...any) (field, error) {
	var f field
	if len(kv)%2 != 0 {
		return f, fmt.Errorf("console: field: odd arguments")
	}
	for i := 0; i < len(kv); i += 2 {
		k, _ := kv[i].(string)
		if k == "Errors" {
			e, ok := kv[i+1].(FormErrors)
			if !ok {
				return f, fmt.Errorf("console: field: Errors is %T", kv[i+1])
			}
			f.Errors = e
			continue
		}
		v, ok := kv[i+1].(string)
		if !ok {
			return f, fmt.Errorf("console: field: %s is %T", k, kv[i+1])
		}
		switch k {
		case "Name":
			f.Name = v
		case "Label":
			f.Label = v
		case "Note":
			f.Note = v
		case "Spell":
			f.Spell = v
		case "Type":
			f.Type = v
		case "Value":
			f.Value = v
		case "Auto":
			f.Auto = v
		case "Hint":
			f.Hint = v
		case "Mode":
			f.Mode = v
		default:
			return f, fmt.Errorf("console: field: unknown key %q", k)
		}
	}
	if f.Type == "" {
		f.Type = "text"
	}
	return f, nil
}

// describedBy is an input's aria-describedby: its hint and its error.
func (f field) DescribedBy() string {
	var ids []string
	if f.Hint != "" {
		ids = append(ids, "hint-"+f.Name)
	}
	if f.Errors.Field(f.Name) != "" {
		ids = append(ids, "err-"+f.Name)
	}
	return strings.Join(ids, " ")
}

// formErrors turns an app error into a form's messages: field errors by
// the form field their pointer names, the rest as the summary. ok is
// false for errors that are not the person's to fix.
func formErrors(err error, fieldOf map[string]string) (FormErrors, bool) {
	var e *errs.Error
	if !errors.As(err, &e) || statusOf(err) == http.StatusInternalServerError {
		return FormErrors{}, false
	}
	return errorFields(e, func(pointer string) string {
		name := strings.TrimPrefix(pointer, "/")
		if i := strings.IndexByte(name, '/'); i >= 0 {
			name = name[:i]
		}
		if m, ok := fieldOf[name]; ok {
			name = m
		}
		return name
	}), true
}

// errorFields are the form's messages for e: each field's first message
// at the form field fieldOf names for its pointer, and e's message as the
// summary unless it only says the fields are invalid.
func errorFields(e *errs.Error, fieldOf func(pointer string) string) FormErrors {
	fe := FormErrors{}
	for _, f := range e.Fields {
		name := fieldOf(f.Pointer)
		if fe.Fields == nil {
			fe.Fields = map[string]string{}
		}
		if _, dup := fe.Fields[name]; !dup {
			fe.Fields[name] = f.Message
		}
	}
	if len(e.Fields) == 0 || e.Message != "the request has invalid fields" {
		fe.Summary = e.Message
	}
	return fe
}

// posted is a submitted form whose text is judged where it enters: a
// value that is not valid UTF-8 without NUL is a field error and reads
// as empty, so it never goes on.
type posted struct {
	f url.Values
	unread
}

func (q *request) posted() (*posted, error) {
	if err := q.parse(); err != nil {
		return nil, err
	}
	return &posted{f: q.r.PostForm}, nil
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

// FormMode says whether the monitor form creates or edits.
type FormMode string

// The form's modes.
const (
	FormNew  FormMode = "new"
	FormEdit FormMode = "edit"
)
