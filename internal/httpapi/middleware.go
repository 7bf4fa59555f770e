package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/ids"
)

// writeJSONError writes the envelope outside huma (panics, unknown routes).
func writeJSONError(w http.ResponseWriter, r *http.Request, e *ErrorResponse) {
	e.Err.RequestID = requestIDFrom(r.Context())
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(e)
}

// validRequestID accepts a caller's X-Request-Id only when it is short and
// plain, so it is safe to log and echo.
func validRequestID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// statusWriter remembers the status for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Observe gives every request an id (X-Request-Id, in every log line), a
// logger, panic recovery and an access-log line. It wraps the whole server,
// not only the API.
func Observe(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rid := r.Header.Get("X-Request-Id")
		if !validRequestID(rid) {
			rid = ids.New(ids.Request, start)
		}
		w.Header().Set("X-Request-Id", rid)
		// The logger is built only when something is logged (loggerFrom).
		ctx := context.WithValue(r.Context(), requestKey, &requestInfo{id: rid, log: log})
		r = r.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				l := loggerFrom(ctx)
				l.ErrorContext(ctx, "panic serving request", "panic", p, "method", r.Method, "path", redactPath(r.URL.Path))
				if sw.status == 0 {
					writeJSONError(sw, r, &ErrorResponse{status: http.StatusInternalServerError,
						Err: ErrorObject{Code: "internal", Message: "internal error; quote the requestId when reporting it"}})
				}
			}
			if log.Enabled(ctx, slog.LevelDebug) || sw.status >= 500 {
				loggerFrom(ctx).LogAttrs(ctx, levelFor(sw.status), "request", slog.String("method", r.Method),
					slog.String("path", redactPath(r.URL.Path)), slog.Int("status", sw.status), slog.Duration("took", time.Since(start)))
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

func levelFor(status int) slog.Level {
	if status >= 500 {
		return slog.LevelError
	}
	return slog.LevelDebug
}

// routed answers requests that match no route with the envelope instead of
// the mux's plain text: 404 not_found, or 405 method_not_allowed with Allow.
// It is the mux's catch-all pattern, so matched requests pay nothing extra.
// Such requests authenticate nothing: they count against their client
// address, as requests without a valid key do.
func (s *Server) routed() {
	mux := s.mux
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if s.limitAddress(r, w.Header(), bucketAddress) {
			writeJSONError(w, r, addressLimited())
			return
		}
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := mux.Handler(probe); pattern != "/" && pattern != "" {
				allow = append(allow, m)
			}
		}
		if len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeJSONError(w, r, &ErrorResponse{status: http.StatusMethodNotAllowed, Err: ErrorObject{Code: "method_not_allowed",
				Message: r.Method + " is not allowed here; allowed: " + strings.Join(allow, ", ")}})
			return
		}
		writeJSONError(w, r, &ErrorResponse{status: http.StatusNotFound, Err: ErrorObject{Code: "not_found",
			Message: "no such route: " + r.Method + " " + strings.ToValidUTF8(r.URL.Path, "?")}})
	})
}
