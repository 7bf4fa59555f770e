package web

import (
	"net/url"

	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/webui"
)

// posted is a submitted form whose text is judged where it enters: a
// value that is not valid UTF-8 without NUL is a field error and reads
// as empty, so it never goes on.
type posted struct {
	f   url.Values
	bad map[string]string
}

func (q *request) posted() (*posted, bool) {
	if !q.parse() {
		return nil, false
	}
	return &posted{f: q.r.PostForm}, true
}

func (p *posted) fail(name, msg string) {
	if p.bad == nil {
		p.bad = map[string]string{}
	}
	if _, dup := p.bad[name]; !dup {
		p.bad[name] = msg
	}
}

const invalidText = "Must be valid UTF-8 text without NUL."

func (p *posted) get(name string) string {
	v := p.f.Get(name)
	if !clean.Valid(v) {
		p.fail(name, invalidText)
		return ""
	}
	return v
}

func (p *posted) list(name string) []string {
	var out []string
	for _, v := range p.f[name] {
		if !clean.Valid(v) {
			p.fail(name, invalidText)
			continue
		}
		out = append(out, v)
	}
	return out
}

// errors are the form's messages: the unreadable fields, and err's (nil
// for none) mapped by fieldOf; ok is false when err is not the person's
// to fix.
func (p *posted) errors(err error, fieldOf map[string]string) (webui.FormErrors, bool) {
	fe := webui.FormErrors{}
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

// invalidFields is the app's error for problems found without it.
func invalidFields(problems []errs.FieldError) error {
	if len(problems) == 0 {
		return nil
	}
	return &errs.Error{Kind: errs.KindInvalid, Message: "the request has invalid fields", Fields: problems}
}
