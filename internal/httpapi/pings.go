package httpapi

import (
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/stamp"
)

// The ping endpoint: {base}/ping/{token}[/start|/fail|/{exitCode}], GET or
// POST, with optional ?key= (a retry within 24 hours is a no-op) and ?rid=
// (pairs a start with its end). It is a plain handler, not a huma
// operation: it is the hottest path of the service, takes any body, and
// its answer is small. documentPings describes it in the OpenAPI document.

// PingPrefix is where ping URLs start.
const PingPrefix = "/ping/"

// Limits on what a ping may carry (heartbeat.Arrival.Clean bounds the
// rest).
const (
	maxPingKey  = heartbeat.MaxLabel
	maxRunID    = heartbeat.MaxLabel
	maxTokenLen = 128
	// pingDrain is how much of a longer body is read and thrown away, so
	// the connection can be kept alive.
	pingDrain = 1 << 20
)

// PingAck is the answer to a ping.
type PingAck struct {
	OK            bool       `json:"ok" doc:"Always true: the ping is stored."`
	Signal        string     `json:"signal" enum:"success,start,fail" doc:"What the ping said."`
	ExitCode      *int       `json:"exitCode,omitempty" doc:"The exit code in the path, if one was given."`
	ReceivedAt    stamp.Time `json:"receivedAt"`
	Ignored       bool       `json:"ignored,omitempty" doc:"The heartbeat is paused: the ping was kept but changed nothing."`
	BodyTruncated bool       `json:"bodyTruncated,omitempty" doc:"The body was longer than 10 KiB; its first 10 KiB were kept."`
	DurationMs    *float64   `json:"durationMs,omitempty" doc:"The end of a run that sent /start: how long it took."`
	Replayed      bool       `json:"replayed,omitempty" doc:"A retry of a ping with the same key within 24 hours: nothing was recorded again, and this is the first answer."`
}

func toPingAck(a heartbeat.Ack, replayed bool) PingAck {
	out := PingAck{OK: true, Signal: a.Signal, ReceivedAt: stamp.Of(a.ReceivedAt), Ignored: a.Ignored,
		BodyTruncated: a.BodyTruncated, Replayed: replayed}
	if a.ExitCode >= 0 {
		code := a.ExitCode
		out.ExitCode = &code
	}
	if a.DurationUs >= 0 {
		d := float64(a.DurationUs) / 1000
		out.DurationMs = &d
	}
	return out
}

// ServePing answers a ping.
func (s *Server) ServePing(w http.ResponseWriter, r *http.Request) {
	client := s.clients.Client(r)
	rest, _ := strings.CutPrefix(r.URL.Path, PingPrefix)
	token, suffix, _ := strings.Cut(rest, "/")
	// Every answer says how much of the budget that applies is left: the
	// heartbeat's, or, for a URL that names none, the client address's.
	// Ping reports it for the pings it sees; the rest ask PingBudget.
	var rate *app.RateStatus
	fail := func(status int, code, msg string) {
		if rate == nil {
			rs := s.app.PingBudget(token, client)
			rate = &rs
		}
		setRateHeaders(w.Header(), *rate)
		writeJSONError(w, r, &ErrorResponse{status: status, Err: ErrorObject{Code: code, Message: msg}})
	}
	if r.Method != http.MethodGet && r.Method != http.MethodPost && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD, POST")
		fail(http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed here; allowed: GET, HEAD, POST")
		return
	}
	if !validToken(token) {
		fail(http.StatusNotFound, "not_found", "no heartbeat has this ping URL")
		return
	}
	sig, exit, ok := heartbeat.ParsePingSuffix(suffix)
	if !ok {
		fail(http.StatusBadRequest, "bad_request", "the ping URL ends in /start, /fail, or an exit code from 0 to 255, or nothing")
		return
	}
	var key, rid string
	if r.URL.RawQuery != "" {
		q := r.URL.Query()
		key, rid = q.Get("key"), q.Get("rid")
	}
	if len(key) > maxPingKey || len(rid) > maxRunID {
		fail(http.StatusBadRequest, "bad_request", "key and rid may have at most 128 characters")
		return
	}
	in := heartbeat.Arrival{Ping: heartbeat.Ping{Signal: sig, ExitCode: exit, RunID: rid}, Method: r.Method,
		Client: client, UserAgent: clean.Text(r.UserAgent(), heartbeat.MaxUserAgent), Key: key}
	if in.Method == http.MethodHead {
		in.Method = http.MethodGet
	}
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(io.LimitReader(r.Body, heartbeat.MaxPingBody+1))
		if err != nil {
			fail(http.StatusBadRequest, "bad_request", "the request body could not be read")
			return
		}
		if len(body) > heartbeat.MaxPingBody {
			body, in.Truncated = body[:heartbeat.MaxPingBody], true
			_, _ = io.CopyN(io.Discard, r.Body, pingDrain)
		}
		if len(body) > 0 {
			in.Body = body
		}
	}
	out, rs, err := s.app.Ping(r.Context(), token, in)
	rate = &rs
	switch {
	case err != nil:
		var limited *app.RateLimitedError
		if errors.As(err, &limited) {
			fail(http.StatusTooManyRequests, "rate_limited", limited.Error())
			return
		}
		var me *errs.Error
		if errors.As(err, &me) && me.Kind == errs.KindUnavailable {
			w.Header().Set("Retry-After", "1")
			fail(http.StatusServiceUnavailable, "unavailable", me.Message)
			return
		}
		if r.Context().Err() != nil {
			return // the client went away
		}
		loggerFrom(r.Context()).ErrorContext(r.Context(), "storing a ping", "err", err)
		fail(http.StatusInternalServerError, "internal", "internal error; quote the requestId when reporting it")
		return
	case !out.Found:
		fail(http.StatusNotFound, "not_found", "no heartbeat has this ping URL")
		return
	}
	setRateHeaders(w.Header(), rs)
	h := w.Header()
	if out.Replayed {
		h["Idempotent-Replayed"] = headerTrue
	}
	b := appendPingAck(make([]byte, 0, 160), toPingAck(out.Ack, out.Replayed))
	b = append(b, '\n')
	h["Content-Type"] = headerJSON
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	h["Cache-Control"] = headerNoStore
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// Header values of every acknowledgement, shared (net/http only reads them).
var (
	headerTrue    = []string{"true"}
	headerJSON    = []string{"application/json"}
	headerNoStore = []string{"no-store"}
)

// appendPingAck appends a as encoding/json would write it: by hand, since
// it is written for every ping (TestPingAckEncoding holds the two alike).
func appendPingAck(dst []byte, a PingAck) []byte {
	dst = append(dst, `{"ok":`...)
	dst = strconv.AppendBool(dst, a.OK)
	dst = append(dst, `,"signal":`...)
	dst = appendJSONString(dst, a.Signal)
	if a.ExitCode != nil {
		dst = append(dst, `,"exitCode":`...)
		dst = strconv.AppendInt(dst, int64(*a.ExitCode), 10)
	}
	dst = append(dst, `,"receivedAt":"`...)
	dst = stamp.Append(dst, a.ReceivedAt.Time)
	dst = append(dst, '"')
	if a.Ignored {
		dst = append(dst, `,"ignored":true`...)
	}
	if a.BodyTruncated {
		dst = append(dst, `,"bodyTruncated":true`...)
	}
	if a.DurationMs != nil {
		dst = append(dst, `,"durationMs":`...)
		dst = appendJSONFloat(dst, *a.DurationMs)
	}
	if a.Replayed {
		dst = append(dst, `,"replayed":true`...)
	}
	return append(dst, '}')
}

// appendJSONString appends s as encoding/json does (HTML characters
// escaped, invalid UTF-8 replaced); signals are plain ASCII, so the quick
// path is the whole story in practice.
func appendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(dst, b...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// appendJSONFloat appends f as encoding/json does.
func appendJSONFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		n := len(dst)
		if n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// validToken accepts what NewToken makes, loosely: URL-safe characters.
func validToken(t string) bool {
	if len(t) < 16 || len(t) > maxTokenLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// redactPath hides the secret of a ping URL in logs.
func redactPath(p string) string {
	if rest, ok := strings.CutPrefix(p, PingPrefix); ok {
		_, suffix, has := strings.Cut(rest, "/")
		if has {
			return PingPrefix + "…/" + suffix
		}
		return PingPrefix + "…"
	}
	return p
}

// documentPings adds the ping URLs to the OpenAPI document: they are served
// by ServePing, not huma, but their answer and errors are these types.
func (s *Server) documentPings() {
	doc := s.api.OpenAPI()
	reg := doc.Components.Schemas
	ack := reg.Schema(reflect.TypeFor[PingAck](), true, "PingAck")
	errSchema := reg.Schema(reflect.TypeFor[ErrorResponse](), true, "ErrorResponse")
	str := &huma.Schema{Type: huma.TypeString}
	params := []*huma.Param{
		{Name: "token", In: "path", Required: true, Description: "The secret part of the heartbeat's pingUrl.",
			Schema: &huma.Schema{Type: huma.TypeString, MinLength: new(16), MaxLength: new(maxTokenLen), Pattern: "^[A-Za-z0-9_-]+$"}},
		{Name: "key", In: "query", Description: "Makes a retry a no-op: the same key for the same heartbeat within 24 hours is answered with the first acknowledgement (and Idempotent-Replayed: true) and recorded once.",
			Schema: &huma.Schema{Type: huma.TypeString, MaxLength: new(maxPingKey)}},
		{Name: "rid", In: "query", Description: "A run id: pairs a /start with the ping that ends the run. Without it, a completion ends the latest open start.",
			Schema: &huma.Schema{Type: huma.TypeString, MaxLength: new(maxRunID)}},
	}
	errResp := func(desc string) *huma.Response {
		return &huma.Response{Description: desc, Content: map[string]*huma.MediaType{"application/json": {Schema: errSchema}}}
	}
	retry := func(r *huma.Response) *huma.Response {
		r.Headers = map[string]*huma.Param{"Retry-After": {Description: "Seconds to wait before retrying.", Required: true,
			Schema: &huma.Schema{Type: huma.TypeInteger, Minimum: new(0.0)}}}
		return r
	}
	responses := func() map[string]*huma.Response {
		return map[string]*huma.Response{
			"200": {Description: "The ping is stored (or, with a key seen before, was stored then).",
				Headers: map[string]*huma.Param{"Idempotent-Replayed": {Description: "true when this answers a retry with a key seen within 24 hours.", Schema: str}},
				Content: map[string]*huma.MediaType{"application/json": {Schema: ack}}},
			"400": errResp("The path ends in something other than /start, /fail or an exit code 0–255, or key or rid is too long."),
			"404": errResp("No heartbeat has this ping URL (never had, deleted, or its URL was rotated)."),
			"429": retry(errResp("Too many pings: a heartbeat takes 600 a minute in bursts of 100, and an address that sent 60 pings to URLs naming no heartbeat is refused for a while, except for heartbeats it has already reported for. Retry-After says when to retry.")),
			"405": errResp("A method other than GET, HEAD or POST."),
			"503": retry(errResp("The ping could not be stored within 5 seconds; it was not recorded. Retry (with the same key).")),
		}
	}
	body := &huma.RequestBody{Description: "Optional, any content type: the run's log. The first 10 KiB are kept; a longer body is cut and the answer says so.",
		Content: map[string]*huma.MediaType{"*/*": {Schema: &huma.Schema{Type: huma.TypeString}}}}
	signal := &huma.Param{Name: "signal", In: "path", Required: true,
		Description: "start: the run begins; fail: the run failed; an exit code 0–255: 0 is success, any other a failure.",
		Schema:      &huma.Schema{Type: huma.TypeString, Pattern: "^(start|fail|0|[1-9][0-9]?|1[0-9][0-9]|2[0-4][0-9]|25[0-5])$"}}
	for _, p := range []struct {
		path, summary string
		params        []*huma.Param
	}{
		{PingPrefix + "{token}", "Report that a job succeeded", params},
		{PingPrefix + "{token}/{signal}", "Report that a job started, failed or ended with an exit code", append([]*huma.Param{params[0], signal}, params[1:]...)},
	} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			id := "ping"
			if strings.HasSuffix(p.path, "{signal}") {
				id = "pingSignal"
			}
			o := &huma.Operation{OperationID: id + strings.ToUpper(method[:1]) + strings.ToLower(method[1:]), Method: method, Path: p.path,
				Summary: p.summary, Tags: []string{"Pings"}, Parameters: p.params, Responses: responses(),
				Description: "Called by the job itself; no API key: the secret in the URL is the credential. Answered once the ping is stored on disk.",
				// No security scheme: the URL itself is the secret.
				Security: []map[string][]string{}}
			if method == http.MethodPost {
				o.RequestBody = body
			}
			doc.AddOperation(o)
		}
	}
}
