package httpapi

import (
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/app"
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
	if !clean.Valid(r.URL.Path) || !cleanPath(r.URL.Path) {
		// No route has such a path; no resource has such an id. A path
		// with empty, "." or ".." segments is not redirected to a cleaner
		// one, as a ServeMux would, with an HTML body: the API answers
		// only in its error shape.
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
	if s.limitAddress(r, w.Header(), bucketAddress) {
		e = addressLimited()
	}
	writeJSONError(w, r, e)
}

// Buckets kept per client address (clientaddr decides who that is).
const (
	// bucketAddress: requests without a valid key, and to no route.
	bucketAddress = "ip:"
	// bucketDocument: fetches of the OpenAPI document.
	bucketDocument = "doc:"
)

// limitAddress counts one request against its client address's bucket,
// sets the rate-limit headers on h, and reports whether the address is
// over its budget (Retry-After is set then). A failing limiter admits,
// without headers: the answer is a 4xx or the document anyway.
func (s *Server) limitAddress(r *http.Request, h http.Header, bucket string) (over bool) {
	rs, err := s.app.TakeRate(r.Context(), bucket+s.clients.Client(r))
	if err != nil {
		return false
	}
	setRateHeaders(h, rs)
	return !rs.Allowed
}

// setRateHeaders writes the rate-limit headers of rs, and Retry-After
// when it refused.
func setRateHeaders(h http.Header, rs app.RateStatus) {
	h.Set("X-RateLimit-Limit", strconv.Itoa(rs.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(rs.Remaining))
	h.Set("X-RateLimit-Reset", strconv.Itoa(ceilSeconds(rs.Reset)))
	if !rs.Allowed {
		h.Set("Retry-After", strconv.Itoa(max(1, ceilSeconds(rs.RetryAfter))))
	}
}

// knownQuery refuses a query parameter the operation does not declare
// (400, naming each as query.<name>): a misspelt filter must not silently
// widen a listing. What an operation declares is what huma registered
// for it, so a new parameter is accepted as soon as it is declared.
func (s *Server) knownQuery(ctx huma.Context, next func(huma.Context)) {
	u := ctx.URL()
	if u.RawQuery == "" {
		next(ctx)
		return
	}
	declared := ctx.Operation().Parameters
	var unknown []FieldDetail
	seen := map[string]bool{}
	for name := range u.Query() { // the edge has judged every name as text
		known := false
		for _, p := range declared {
			if p.In == "query" && p.Name == name {
				known = true
				break
			}
		}
		if !known && !seen[name] {
			seen[name] = true
			unknown = append(unknown, FieldDetail{Parameter: "query." + clean.Text(name, 64), Message: "unknown parameter; " + accepted(declared)})
		}
	}
	if unknown != nil {
		slices.SortFunc(unknown, func(a, b FieldDetail) int { return strings.Compare(a.Parameter, b.Parameter) })
		writeErr(ctx, &ErrorResponse{status: http.StatusBadRequest, Err: ErrorObject{Code: "bad_request",
			Message: "the request has query parameters this operation does not take", Details: unknown}})
		return
	}
	next(ctx)
}

// accepted says which query parameters an operation takes.
func accepted(ps []*huma.Param) string {
	var names []string
	for _, p := range ps {
		if p.In == "query" {
			names = append(names, p.Name)
		}
	}
	if names == nil {
		return "this operation takes none"
	}
	return "this operation takes: " + strings.Join(names, ", ")
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
	"status-pages":          ids.StatusPage,
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

// cleanPath reports whether p is already in the form path.Clean gives it,
// but for one trailing slash.
func cleanPath(p string) bool {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}
