package httpapi

import (
	"bytes"
	"io"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/app"
)

// metaIdempotent marks POST creates that honour Idempotency-Key.
const metaIdempotent = "idempotent"

// replayedHeaders are the response headers stored with an idempotent
// response; rate-limit and request-id headers describe each request anew.
var replayedHeaders = []string{"Content-Type", "Location"}

// idempotent applies the Idempotency-Key rules of spec §8: the same key and
// body within 24 h replays the stored response byte for byte, a different
// body is 409 idempotency_conflict, a concurrent duplicate is 409
// idempotency_in_progress.
func (s *Server) idempotent(ctx huma.Context, next func(huma.Context)) {
	key := ctx.Header("Idempotency-Key")
	if key == "" || ctx.Operation().Metadata[metaIdempotent] != true {
		next(ctx)
		return
	}
	body, err := io.ReadAll(io.LimitReader(ctx.BodyReader(), maxBodyBytes+1))
	if err != nil {
		writeErr(ctx, huma.NewError(http.StatusBadRequest, "the request body could not be read"))
		return
	}
	if len(body) > maxBodyBytes {
		writeErr(ctx, huma.NewError(http.StatusRequestEntityTooLarge, "the request body is too large"))
		return
	}
	c := ctx.Context()
	u := ctx.URL()
	fp := app.Fingerprint(ctx.Method(), u.Path, body)
	replay, claim, err := s.app.BeginIdempotent(c, actorFrom(c), key, fp)
	if err != nil {
		writeErr(ctx, err)
		return
	}
	if replay != nil {
		for k, v := range replay.Header {
			ctx.SetHeader(k, v)
		}
		ctx.SetHeader("Idempotent-Replayed", "true")
		ctx.SetStatus(replay.Status)
		_, _ = ctx.BodyWriter().Write(replay.Body)
		return
	}
	rec := &recordingContext{humaContext: ctx, body: bytes.NewReader(body), header: map[string]string{}}
	func() {
		defer func() {
			// A panic is a server error: release the key, then let it propagate.
			if p := recover(); p != nil {
				_ = claim.Finish(c, http.StatusInternalServerError, nil, nil)
				panic(p)
			}
		}()
		next(rec)
	}()
	status := rec.Status()
	if status == 0 {
		status = http.StatusOK
	}
	if err := claim.Finish(c, status, rec.header, rec.out.Bytes()); err != nil {
		loggerFrom(c).ErrorContext(c, "storing idempotent response failed", "err", err)
	}
}

// humaContext is an alias so the embedded field does not shadow Context().
type humaContext = huma.Context

// recordingContext feeds the handler the already-read body and keeps a copy
// of what it writes.
type recordingContext struct {
	humaContext
	body   *bytes.Reader
	header map[string]string
	out    bytes.Buffer
	w      io.Writer
}

func (r *recordingContext) BodyReader() io.Reader { return r.body }

func (r *recordingContext) SetHeader(name, value string) {
	for _, h := range replayedHeaders {
		if http.CanonicalHeaderKey(name) == h {
			r.header[h] = value
		}
	}
	r.humaContext.SetHeader(name, value)
}

func (r *recordingContext) BodyWriter() io.Writer {
	if r.w == nil {
		r.w = io.MultiWriter(r.humaContext.BodyWriter(), &r.out)
	}
	return r.w
}
