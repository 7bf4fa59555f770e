package httpapi

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
)

// The edge judges every string that enters the API once, where it enters,
// so no handler, use case or database ever sees NUL or invalid UTF-8
// (PostgreSQL refuses both in text, and that was a 500):
//
//   - the path, the query and the headers the API reads as text, before
//     routing (checkEdge); such a request never reaches authentication;
//   - path ids by their shape, after authentication (knownIDs): an id that
//     cannot exist is not_found without asking the database;
//   - the JSON body in one pass, with its media type (cleanBody, body.go).
//
// Authorization is judged by authenticate (a key is looked up by its hash,
// so no byte of it reaches the database) and X-Request-Id by Observe. The
// ping URLs are not judged here: a ping is never refused for its bytes.

// checkedHeaders are the request headers the API reads as text.
var checkedHeaders = []string{"X-Workspace-Id", "Idempotency-Key"}

const textRule = "must be valid UTF-8 without NUL"

// checkEdge returns why r is refused before routing, or nil.
func checkEdge(r *http.Request) *ErrorResponse {
	if !clean.Valid(r.URL.Path) {
		// No route has such a path; no resource has such an id.
		return &ErrorResponse{status: http.StatusNotFound, Err: ErrorObject{Code: "not_found", Message: errs.ErrNotFound.Message}}
	}
	if d, ok := checkQuery(r.URL.RawQuery); !ok {
		return badParameter(d)
	}
	for _, name := range checkedHeaders {
		for _, v := range r.Header.Values(name) {
			if !clean.Valid(v) {
				return badParameter(FieldDetail{Parameter: "header." + name, Message: textRule})
			}
		}
	}
	return nil
}

// checkQuery judges every name and value of a raw query string as the
// handlers will see them, decoded. A malformed escape is refused too: the
// query parser would silently drop the parameter.
func checkQuery(raw string) (FieldDetail, bool) {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		name, err := url.QueryUnescape(k)
		if err != nil || !clean.Valid(name) {
			return FieldDetail{Parameter: "query", Message: "has a parameter name that is not valid UTF-8 without NUL"}, false
		}
		value, err := url.QueryUnescape(v)
		if err != nil || !clean.Valid(value) {
			return FieldDetail{Parameter: "query." + clean.Text(name, 64), Message: textRule}, false
		}
	}
	return FieldDetail{}, true
}

func badParameter(d FieldDetail) *ErrorResponse {
	return &ErrorResponse{status: http.StatusBadRequest, Err: ErrorObject{Code: "bad_request",
		Message: "a request parameter is not valid text", Details: []FieldDetail{d}}}
}

// refuse answers a request the edge turned away before authentication. It
// counts against its client address as a bad key does (failedAuth), so a
// flood of hostile requests meets 429s.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, e *ErrorResponse) {
	if retry, over := s.addressOverLimit(r.Context(), r.RemoteAddr); over {
		w.Header().Set("Retry-After", strconv.Itoa(retry))
		e = addressLimited()
	}
	writeJSONError(w, r, e)
}

// addressOverLimit counts one request without a valid key against its
// client address and reports whether the address is over its budget, with
// the seconds to wait. A failing limiter admits: the answer is a 4xx anyway.
func (s *Server) addressOverLimit(ctx context.Context, remoteAddr string) (retryAfter int, over bool) {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	rs, err := s.app.TakeRate(ctx, "ip:"+host)
	if err != nil || rs.Allowed {
		return 0, false
	}
	return ceilSeconds(rs.RetryAfter), true
}

func addressLimited() *ErrorResponse {
	return &ErrorResponse{status: http.StatusTooManyRequests, Err: ErrorObject{Code: "rate_limited",
		Message: "too many requests without a valid API key from this address"}}
}

// metaIDs is the Operation.Metadata key holding the operation's path ids.
const metaIDs = "ids"

// idParam is a path parameter that names a resource by id.
type idParam struct{ name, prefix string }

// idPrefixes maps a collection's path segment to the prefix of its ids.
var idPrefixes = map[string]string{
	"monitors":              ids.Monitor,
	"heartbeats":            ids.Heartbeat,
	"incidents":             ids.Incident,
	"maintenance-windows":   ids.Maintenance,
	"notification-channels": ids.Channel,
	"deliveries":            ids.Delivery,
}

// idParams lists the id parameters of a route pattern: each {name} follows
// the collection it names a member of. A parameter after any other segment
// is a programming error, caught when the package initializes its
// operation descriptors.
func idParams(path string) []idParam {
	segs := strings.Split(path, "/")
	var out []idParam
	for i, seg := range segs {
		name, ok := strings.CutPrefix(seg, "{")
		if !ok {
			continue
		}
		prefix := ""
		if i > 0 {
			prefix = idPrefixes[segs[i-1]]
		}
		if prefix == "" {
			panic("httpapi: no id prefix known for " + seg + " in " + path)
		}
		out = append(out, idParam{name: strings.TrimSuffix(name, "}"), prefix: prefix})
	}
	return out
}

// knownIDs answers not_found for a path id that cannot exist (another
// resource's prefix, a wrong length or alphabet), exactly as for an id
// that exists nowhere, without asking the database.
func (s *Server) knownIDs(ctx huma.Context, next func(huma.Context)) {
	ps, _ := ctx.Operation().Metadata[metaIDs].([]idParam)
	for _, p := range ps {
		if !ids.Valid(p.prefix, ctx.Param(p.name)) {
			writeErr(ctx, errs.ErrNotFound)
			return
		}
	}
	next(ctx)
}
