package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/errs"
)

// ErrorResponse is the one error body of the API (spec §7):
// {"error": {"code", "message", "details"?, "requestId"}}.
type ErrorResponse struct {
	Err    ErrorObject `json:"error"`
	status int
	// retryAfter, when positive, is sent as Retry-After (retryHeader).
	retryAfter time.Duration
}

// ErrorObject carries a stable code, a sentence for humans, and where the
// request was at fault, the fields.
type ErrorObject struct {
	Code      string        `json:"code" doc:"Stable machine-readable error code, e.g. validation_error." example:"validation_error"`
	Message   string        `json:"message" doc:"What went wrong, for humans."`
	Details   []FieldDetail `json:"details,omitempty" doc:"For validation errors: every failing field."`
	RequestID string        `json:"requestId,omitempty" doc:"Identifies the request in the service's logs; also sent as X-Request-Id."`
}

// FieldDetail names one failing input. Body fields are named by a JSON
// pointer (RFC 6901); query parameters and headers by location and name.
// The offending value is never echoed back: it may be a secret.
type FieldDetail struct {
	Pointer   string `json:"pointer,omitempty" doc:"JSON pointer into the request body, e.g. /config/url."`
	Parameter string `json:"parameter,omitempty" doc:"For parameters: where and which, e.g. query.limit or header.Idempotency-Key."`
	Message   string `json:"message"`
}

func (e *ErrorResponse) Error() string  { return e.Err.Code + ": " + e.Err.Message }
func (e *ErrorResponse) GetStatus() int { return e.status }

// kinds maps every error kind to its HTTP status and code (DESIGN §2). It is
// the only place domain errors become HTTP.
var kinds = map[errs.Kind]struct {
	status int
	code   string
}{
	errs.KindInternal:              {http.StatusInternalServerError, "internal"},
	errs.KindNotFound:              {http.StatusNotFound, "not_found"},
	errs.KindInvalid:               {http.StatusUnprocessableEntity, "validation_error"},
	errs.KindUnauthenticated:       {http.StatusUnauthorized, "unauthorized"},
	errs.KindInsufficientScope:     {http.StatusForbidden, "insufficient_scope"},
	errs.KindForbidden:             {http.StatusForbidden, "forbidden"},
	errs.KindWorkspaceRequired:     {http.StatusBadRequest, "workspace_required"},
	errs.KindQuota:                 {http.StatusPaymentRequired, "quota_exceeded"},
	errs.KindFeatureUnavailable:    {http.StatusForbidden, "feature_unavailable"},
	errs.KindConflict:              {http.StatusConflict, "conflict"},
	errs.KindIdempotencyMismatch:   {http.StatusConflict, "idempotency_conflict"},
	errs.KindIdempotencyInProgress: {http.StatusConflict, "idempotency_in_progress"},
	errs.KindRateLimited:           {http.StatusTooManyRequests, "rate_limited"},
	errs.KindUnavailable:           {http.StatusServiceUnavailable, "unavailable"},
}

// statusCodes names the errors huma itself raises, by status.
var statusCodes = map[int]string{
	http.StatusBadRequest:            "bad_request",
	http.StatusUnauthorized:          "unauthorized",
	http.StatusForbidden:             "forbidden",
	http.StatusNotFound:              "not_found",
	http.StatusMethodNotAllowed:      "method_not_allowed",
	http.StatusNotAcceptable:         "not_acceptable",
	http.StatusRequestEntityTooLarge: "payload_too_large",
	http.StatusUnsupportedMediaType:  "unsupported_media_type",
	http.StatusUnprocessableEntity:   "validation_error",
	http.StatusTooManyRequests:       "rate_limited",
	http.StatusInternalServerError:   "internal",
}

// fromError turns any error into the envelope. Internal errors are logged
// here, once, and their text never reaches the client.
func fromError(ctx context.Context, err error) *ErrorResponse {
	var er *ErrorResponse
	if errors.As(err, &er) {
		return er
	}
	var me *errs.Error
	if errors.As(err, &me) {
		k := kinds[me.Kind]
		r := &ErrorResponse{status: k.status, Err: ErrorObject{Code: k.code, Message: me.Message}, retryAfter: me.RetryAfter}
		for _, f := range me.Fields {
			r.Err.Details = append(r.Err.Details, fieldDetail(f.Pointer, f.Message))
		}
		if me.Kind != errs.KindInternal {
			return r
		}
	}
	if errors.Is(err, context.Canceled) {
		// The client went away; nobody reads this answer.
		return &ErrorResponse{status: 499, Err: ErrorObject{Code: "client_closed_request", Message: "the client closed the request"}}
	}
	loggerFrom(ctx).ErrorContext(ctx, "request failed", "err", err)
	return &ErrorResponse{status: http.StatusInternalServerError, Err: ErrorObject{Code: "internal", Message: "internal error; quote the requestId when reporting it"}}
}

// retryHeader sets Retry-After on an error that says when to retry. It
// is a transformer, so it runs on every error huma writes, before the
// headers are sent.
func retryHeader(ctx huma.Context, _ string, v any) (any, error) {
	if e, ok := v.(*ErrorResponse); ok && e.retryAfter > 0 {
		ctx.SetHeader("Retry-After", strconv.Itoa(max(1, ceilSeconds(e.retryAfter))))
	}
	return v, nil
}

func fieldDetail(where, msg string) FieldDetail {
	if strings.HasPrefix(where, "/") || where == "" {
		return FieldDetail{Pointer: where, Message: msg}
	}
	return FieldDetail{Parameter: where, Message: msg}
}

// humaError replaces huma's error constructor: every error huma raises
// (schema validation, malformed JSON, oversize bodies…) and every error a
// handler returns becomes our envelope.
func humaError(ctx huma.Context, status int, msg string, problems ...error) huma.StatusError {
	var c context.Context = context.Background()
	if ctx != nil {
		c = ctx.Context()
	}
	for _, err := range problems {
		if err == nil {
			continue
		}
		var me *errs.Error
		var er *ErrorResponse
		if errors.As(err, &me) || errors.As(err, &er) || status >= 500 {
			r := fromError(c, err)
			r.Err.RequestID = requestIDFrom(c)
			return r
		}
	}
	code, ok := statusCodes[status]
	if !ok {
		code = strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	}
	r := &ErrorResponse{status: status, Err: ErrorObject{Code: code, Message: humaMessage(status, msg, problems)}}
	if status >= 500 {
		loggerFrom(c).ErrorContext(c, "request failed", "msg", msg, "problems", fmt.Sprint(problems))
		r.Err.Message = "internal error; quote the requestId when reporting it"
	}
	seen := map[string]int{}   // pointer → index in Details
	vague := map[string]bool{} // pointers whose message names no accepted value
	for _, err := range problems {
		var d huma.ErrorDetailer
		if errors.As(err, &d) {
			det := d.ErrorDetail()
			where := locationPointer(det.Location)
			if status != http.StatusUnprocessableEntity && status != http.StatusBadRequest {
				break // 413, 415…: the status says it all; field rules never ran
			}
			if status == http.StatusBadRequest && !strings.HasPrefix(det.Location, "body") {
				continue // only the parse error; domain rules ran on an empty body
			}
			// huma names a missing property at its parent; point at the property.
			if name, ok := strings.CutPrefix(det.Message, "expected required property "); ok {
				name, _, _ = strings.Cut(name, " ")
				where = strings.TrimSuffix(where, "/") + "/" + name
			}
			// A parameter given several times is named once.
			if !strings.HasPrefix(where, "/") {
				where, _, _ = strings.Cut(where, "[")
			}
			// Schema and domain rules may both flag a field; report it
			// once. The schema's message is about the value sent (the
			// domain's may be about a value the decoding lost), but where
			// it only says no alternative matched, the domain's (Resolve
			// names fields by pointer) says what would be accepted.
			domain := strings.HasPrefix(det.Location, "/")
			msg := acceptable(det.Message)
			if i, ok := seen[where]; ok {
				if domain && vague[where] {
					r.Err.Details[i].Message, vague[where] = msg, false
				}
				continue
			}
			seen[where], vague[where] = len(r.Err.Details), !domain && strings.HasSuffix(msg, "but matched none")
			r.Err.Details = append(r.Err.Details, fieldDetail(where, msg))
		}
	}
	r.Err.RequestID = requestIDFrom(c)
	return r
}

// timeExample is the time the messages about times show.
const timeExample = `"2026-11-25T14:00:00Z"`

// acceptable rewrites huma's messages that would not tell a client what
// to send: its time messages name a Go layout or no example.
func acceptable(msg string) string {
	if strings.HasPrefix(msg, "invalid date/time for format") || strings.Contains(msg, "RFC 3339 date-time") {
		return "must be an RFC 3339 time such as " + timeExample
	}
	return msg
}

func humaMessage(status int, msg string, problems []error) string {
	switch status {
	case http.StatusUnprocessableEntity:
		return "the request has invalid fields"
	case http.StatusBadRequest:
		for _, err := range problems {
			var d huma.ErrorDetailer
			if errors.As(err, &d) && strings.HasPrefix(d.ErrorDetail().Location, "body") {
				return "the request body is not valid JSON"
			}
		}
	case http.StatusUnsupportedMediaType:
		return "send the request body as Content-Type: application/json"
	case http.StatusRequestEntityTooLarge:
		return "the request body is too large"
	}
	if msg == "" {
		return http.StatusText(status)
	}
	return msg
}

// locationPointer turns huma's "body.config.items[3].x" into "/config/items/3/x";
// other locations ("query.limit") stay as they are.
func locationPointer(loc string) string {
	rest, ok := strings.CutPrefix(loc, "body")
	if !ok {
		return loc
	}
	var b strings.Builder
	for _, part := range strings.FieldsFunc(rest, func(r rune) bool { return r == '.' || r == '[' }) {
		part = strings.TrimSuffix(part, "]")
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(part, "~", "~0"), "/", "~1"))
	}
	if b.Len() == 0 {
		return "/"
	}
	return b.String()
}

// huma's package-level settings are set once, here, before any API exists.
func init() {
	huma.DefaultArrayNullable = false // an absent list is [], never null
	huma.NewErrorWithContext = humaError
	huma.NewError = func(status int, msg string, problems ...error) huma.StatusError {
		return humaError(nil, status, msg, problems...)
	}
}

type ctxKey int

const (
	requestKey ctxKey = iota
	actorKey
)

// requestInfo is what Observe gives a request's context: one value, so
// the ping path allocates once for it.
type requestInfo struct {
	id  string
	log *slog.Logger
}

func requestIDFrom(ctx context.Context) string {
	if ri, ok := ctx.Value(requestKey).(*requestInfo); ok {
		return ri.id
	}
	return ""
}

// loggerFrom is the request's logger: the server's, with the request id.
func loggerFrom(ctx context.Context) *slog.Logger {
	ri, _ := ctx.Value(requestKey).(*requestInfo)
	l := slog.Default()
	if ri != nil && ri.log != nil {
		l = ri.log
	}
	if rid := requestIDFrom(ctx); rid != "" {
		l = l.With("requestId", rid)
	}
	return l
}
