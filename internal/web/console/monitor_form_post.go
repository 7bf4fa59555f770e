package console

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
)

// maxFormRows bounds the repeatable rows read from a form.
const maxFormRows = 100

// monitorForm is a submitted monitor form.
type monitorForm struct {
	values MonitorValues
	draft  monitor.Draft
	// keywordRows and assertionRows are the form rows of the draft's
	// keyword and JSON assertions (blank rows are skipped).
	keywordRows, assertionRows []int
	// headers are the "Name: value" lines typed.
	headers map[string]string
	// unread holds the fields that could not be read.
	unread
	// authSecret says a secret of the chosen credential type was typed.
	authSecret bool
}

// number reads an optional whole number; empty is 0 (the default).
func (mf *monitorForm) number(name, s string) int {
	s = strings.TrimSpace(strings.ReplaceAll(s, "_", ""))
	if s == "" {
		return 0
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		mf.fail(name, "must be a whole number")
		return 0
	}
	return n
}

// readMonitorForm reads a posted monitor form; typ, when not empty, is
// the stored monitor's type (an edit cannot change it).
func readMonitorForm(f url.Values, typ monitor.Type) *monitorForm {
	mf := &monitorForm{}
	f = mf.judged(f, unreadText)
	v := &mf.values
	if typ == "" {
		typ = monitor.Type(f.Get("type"))
	}
	*v = MonitorValues{Type: string(typ), Name: f.Get("name"), Interval: f.Get("interval"), Timeout: f.Get("timeout"),
		DegradedLatency: f.Get("degraded-latency"), Confirmations: f.Get("confirmations"), Recoveries: f.Get("recoveries"),
		Paused: f.Get("paused") != "", SLOTarget: f.Get("slo-target"), SLOPeriod: f.Get("slo-period"),
		URL: f.Get("url"), Method: f.Get("method"), Headers: f.Get("headers"), HeaderRemove: f["header-remove"], Body: f.Get("body"),
		FollowRedirects: f.Get("follow-redirects") != "", StatusCodes: f.Get("status-codes"),
		AuthType: f.Get("auth-type"), AuthUsername: f.Get("auth-username"), AuthHeader: f.Get("auth-header"),
		TCPHost: f.Get("tcp-host"), TCPPort: f.Get("tcp-port"), Send: f.Get("send"), Expect: f.Get("expect"),
		RecordName: f.Get("record-name"), RecordType: f.Get("record-type"), ExpectedValues: f.Get("expected-values"), Resolver: f.Get("resolver"),
		TLSHost: f.Get("tls-host"), TLSPort: f.Get("tls-port"), ServerName: f.Get("server-name"),
		DegradedExpiry: f.Get("degraded-expiry"), DownExpiry: f.Get("down-expiry")}
	for i := 0; i < maxFormRows && f.Has(fmt.Sprintf("keyword-%d", i)); i++ {
		n := fmt.Sprintf("keyword-%d", i)
		v.Keywords = append(v.Keywords, KeywordRow{Keyword: f.Get(n), Absent: f.Get(n+"-absent") != "", NoCase: f.Get(n+"-nocase") != ""})
	}
	for i := 0; i < maxFormRows && f.Has(fmt.Sprintf("assertion-%d-path", i)); i++ {
		n := fmt.Sprintf("assertion-%d-", i)
		v.Assertions = append(v.Assertions, AssertionRow{Path: f.Get(n + "path"), Operator: f.Get(n + "operator"), Value: f.Get(n + "value")})
	}

	d := &mf.draft
	c := &d.Config
	d.Type, d.Name, d.Paused = typ, v.Name, v.Paused
	d.IntervalSeconds = mf.number("interval", v.Interval)
	c.TimeoutSeconds = mf.number("timeout", v.Timeout)
	c.DegradedLatencyMs = mf.number("degraded-latency", v.DegradedLatency)
	c.Confirmations = mf.number("confirmations", v.Confirmations)
	c.Recoveries = mf.number("recoveries", v.Recoveries)
	d.SLO = mf.slo(v.SLOTarget, v.SLOPeriod)
	switch typ {
	case monitor.TypeHTTP:
		mf.http(f)
	case monitor.TypeTCP:
		c.Host, c.Port = strings.TrimSpace(v.TCPHost), mf.number("tcp-port", v.TCPPort)
		c.Send, c.Expect = v.Send, v.Expect
	case monitor.TypeDNS:
		c.RecordName, c.RecordType, c.Resolver = strings.TrimSpace(v.RecordName), v.RecordType, strings.TrimSpace(v.Resolver)
		for _, line := range strings.Split(v.ExpectedValues, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				c.ExpectedValues = append(c.ExpectedValues, line)
			}
		}
	case monitor.TypeTLS:
		c.Host, c.Port = strings.TrimSpace(v.TLSHost), mf.number("tls-port", v.TLSPort)
		c.ServerName = strings.TrimSpace(v.ServerName)
		c.DegradedExpiryDays = mf.number("degraded-expiry", v.DegradedExpiry)
		c.DownExpiryDays = mf.number("down-expiry", v.DownExpiry)
	}
	return mf
}

// slo reads the objective: a percentage and days; both empty is none.
func (mf *monitorForm) slo(target, period string) *monitor.SLO {
	target = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(target), "%"))
	if target == "" && strings.TrimSpace(period) == "" {
		return nil
	}
	s := &monitor.SLO{PeriodDays: mf.number("slo-period", period)}
	if target != "" {
		// "99.9" → 0.999, rounded once from the decimal (no 0.9990000000000001).
		t, err := strconv.ParseFloat(target+"e-2", 64)
		if err != nil || strings.ContainsAny(target, "eE") {
			mf.fail("slo-target", "must be a percentage such as 99.9")
		}
		s.Target = t
	}
	if _, bad := mf.bad["slo-target"]; bad {
		s.Target = 0.5 // valid, so the objective's other field is still checked alone
	}
	return s
}

func (mf *monitorForm) http(f url.Values) {
	v, c := &mf.values, &mf.draft.Config
	c.URL, c.Method, c.Body = strings.TrimSpace(v.URL), v.Method, v.Body
	follow := v.FollowRedirects
	c.FollowRedirects = &follow
	for i, line := range strings.Split(v.Headers, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) == "" {
			mf.fail("headers", fmt.Sprintf("line %d is not “Name: value”", i+1))
			continue
		}
		if mf.headers == nil {
			mf.headers = map[string]string{}
		}
		mf.headers[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	c.Headers = mf.headers
	for _, part := range strings.Split(v.StatusCodes, ",") {
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		r, problem := monitor.ParseStatusRange(part)
		if problem != "" {
			mf.fail("status-codes", fmt.Sprintf("%q %s", part, problem))
			continue
		}
		c.ExpectedStatusCodes = append(c.ExpectedStatusCodes, r)
	}
	for i, k := range v.Keywords {
		if k.Blank() {
			continue
		}
		mf.keywordRows = append(mf.keywordRows, i)
		c.KeywordAssertions = append(c.KeywordAssertions, monitor.KeywordAssertion{Keyword: k.Keyword, Present: !k.Absent, CaseSensitive: !k.NoCase})
	}
	for i, a := range v.Assertions {
		if a.Blank() {
			continue
		}
		mf.assertionRows = append(mf.assertionRows, i)
		c.JSONAssertions = append(c.JSONAssertions, monitor.JSONAssertion{Path: strings.TrimSpace(a.Path), Operator: monitor.Operator(a.Operator),
			Value: jsonValue(a.Value)})
	}
	// Only the chosen credential's fields: others may hold what was typed
	// before the choice changed.
	secret := func(name string) string {
		s := f.Get(name)
		if s != "" {
			mf.authSecret = true
		}
		return s
	}
	defer func() { v.AuthRetype = mf.authSecret }()
	switch t := monitor.AuthType(v.AuthType); t {
	case "":
	case monitor.AuthBasic:
		mf.draft.Auth = &monitor.Auth{Type: t, Username: v.AuthUsername, Password: secret("auth-password")}
	case monitor.AuthBearer:
		mf.draft.Auth = &monitor.Auth{Type: t, Token: secret("auth-token")}
	case monitor.AuthHeader:
		mf.draft.Auth = &monitor.Auth{Type: t, Header: strings.TrimSpace(v.AuthHeader), Value: secret("auth-value")}
	default:
		mf.draft.Auth = &monitor.Auth{Type: t}
	}
}

// kept stands in for a stored secret of type t in a check of the form
// alone, when the secret belongs to type want.
func kept(t, want monitor.AuthType) string {
	if t == want {
		return "kept"
	}
	return ""
}

// jsonValue is a typed assertion value as JSON: JSON as it is, other
// text as a string, nothing as absent.
func jsonValue(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	if json.Valid([]byte(s)) {
		return json.RawMessage(s)
	}
	b, _ := json.Marshal(s)
	return b
}

// problems are the form's unreadable fields plus what the draft's own
// validation finds, when any field could not be read: the app is then
// not called, and the answer still lists every mistake. stored is the
// credential an edited monitor keeps when its secret is not typed again.
func (mf *monitorForm) problems(stored *monitor.AuthPresence) FormErrors {
	if len(mf.bad) == 0 {
		return FormErrors{}
	}
	d := mf.draft
	d.Config = d.Config.Clone()
	if d.Auth != nil {
		a := *d.Auth
		if stored != nil && stored.Type == a.Type && !mf.authSecret {
			a.Password, a.Token, a.Value = kept(a.Type, monitor.AuthBasic), kept(a.Type, monitor.AuthBearer), kept(a.Type, monitor.AuthHeader)
		}
		d.Auth = &a
	}
	fields := append(d.Normalize(), app.SLOProblems(d.SLO)...)
	return mf.errors(&errs.Error{Kind: errs.KindInvalid, Message: "the request has invalid fields", Fields: fields})
}

// errors are the form's messages for an app error, with the fields that
// could not be read.
func (mf *monitorForm) errors(err error) FormErrors {
	return appFieldErrors(err, mf.bad, func(ptr string) string {
		return MonitorField(mf.draft.Type, ptr, mf.keywordRows, mf.assertionRows)
	}, MonitorFieldMessage)
}

// update is the edit of stored monitor the form asks for. Write-only
// secrets stay as stored unless typed again: an empty password, token or
// header value keeps the stored one; credentials "none" removes it.
// Stored headers keep their values unless named again or ticked for
// removal.
func (mf *monitorForm) update() app.MonitorUpdate {
	return func(cur monitor.Monitor) (app.MonitorChange, error) {
		d := mf.draft
		d.Type, d.Paused = cur.Type, cur.Paused
		d.Config.Headers = nil // app merges the patch into the stored values
		ch := app.MonitorChange{Draft: d, Auth: app.AuthReplace}
		for name, value := range mf.headers {
			if ch.Headers.Set == nil {
				ch.Headers.Set = map[string]*string{}
			}
			ch.Headers.Set[name] = &value
		}
		for _, name := range mf.values.HeaderRemove {
			if _, typed := mf.headers[name]; !typed {
				if ch.Headers.Set == nil {
					ch.Headers.Set = map[string]*string{}
				}
				ch.Headers.Set[name] = nil
			}
		}
		stored, auth := cur.Config.AuthSet, d.Auth
		switch {
		case auth == nil && stored == nil:
			ch.Auth = app.AuthKeep
		case auth == nil:
			ch.Auth = app.AuthRemove
		case stored != nil && stored.Type == auth.Type && !mf.authSecret:
			if auth.Username != stored.Username || auth.Header != stored.Header {
				field := map[monitor.AuthType]string{monitor.AuthBasic: "password", monitor.AuthHeader: "value"}[auth.Type]
				return ch, &errs.Error{Kind: errs.KindInvalid, Message: "the request has invalid fields", Fields: []errs.FieldError{
					{Pointer: "/config/auth/" + field, Message: "must be typed again to change the credential (the stored one is never shown)"}}}
			}
			ch.Auth, ch.Draft.Auth = app.AuthKeep, nil
		}
		return ch, nil
	}
}

// testDraft is the draft "Test now" checks. On an edit form a stored
// credential that is not typed again is left out (it is never read back
// out of the store for a test).
func (mf *monitorForm) testDraft(stored *monitor.AuthPresence) monitor.Draft {
	d := mf.draft
	if a := d.Auth; a != nil && stored != nil && stored.Type == a.Type && !mf.authSecret {
		d.Auth = nil
	}
	return d
}
