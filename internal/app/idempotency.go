package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/store"
)

// idempotencyLock is how long an unfinished first request holds its key
// before a retry may take over (the first request crashed).
const idempotencyLock = 2 * time.Minute

// Fingerprint identifies a request for idempotency: method, path and the
// body in canonical JSON form (key order and spacing do not matter). A body
// that is not JSON is hashed as sent.
func Fingerprint(method, path string, body []byte) []byte {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(canonicalJSON(body))
	return h.Sum(nil)
}

func canonicalJSON(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return body
	}
	if _, err := dec.Token(); err != io.EOF {
		return body // trailing data: not one JSON value
	}
	out, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return body
	}
	return out
}

// Replay is a stored response to send again.
type Replay struct {
	Status int
	Header map[string]string
	Body   []byte
}

// IdempotentRequest is one claimed Idempotency-Key. Finish stores the
// response (or releases the key on a server error).
type IdempotentRequest struct {
	app   *App
	scope store.IdempotencyScope
}

// BeginIdempotent claims key for this actor. It returns either a replay of
// the stored response, or a claim the caller must Finish.
func (a *App) BeginIdempotent(ctx context.Context, actor Actor, key string, fingerprint []byte) (*Replay, *IdempotentRequest, error) {
	if key == "" || len(key) > 255 {
		return nil, nil, &errs.Error{Kind: errs.KindInvalid, Message: "Idempotency-Key must be 1 to 255 characters",
			Fields: []errs.FieldError{{Pointer: "header.Idempotency-Key", Message: "must be 1 to 255 characters"}}}
	}
	s := store.IdempotencyScope{WorkspaceID: actor.WorkspaceID, KeyID: actor.KeyID, Key: key}
	rec, acquired, err := a.store.BeginIdempotent(ctx, s, fingerprint, a.now(), a.cfg.IdempotencyTTL, idempotencyLock)
	if err != nil {
		return nil, nil, err
	}
	if acquired {
		return nil, &IdempotentRequest{app: a, scope: s}, nil
	}
	if !bytes.Equal(rec.Fingerprint, fingerprint) {
		return nil, nil, &errs.Error{Kind: errs.KindIdempotencyMismatch,
			Message: "this Idempotency-Key was already used with a different request"}
	}
	if !rec.Done {
		return nil, nil, &errs.Error{Kind: errs.KindIdempotencyInProgress,
			Message: "a request with this Idempotency-Key is still in progress; retry later"}
	}
	body, err := a.openResponse(s, rec.Body)
	if err != nil {
		return nil, nil, err
	}
	r := &Replay{Status: rec.Status, Body: body}
	if len(rec.Header) > 0 {
		if err := json.Unmarshal(rec.Header, &r.Header); err != nil {
			return nil, nil, err
		}
	}
	return r, nil, nil
}

// Finish stores the response for replay; a 5xx releases the key instead, so
// the client may retry.
func (r *IdempotentRequest) Finish(ctx context.Context, status int, header map[string]string, body []byte) error {
	// The response must be recorded even if the client went away.
	ctx = context.WithoutCancel(ctx)
	if status >= 500 {
		return r.app.store.AbandonIdempotent(ctx, r.scope)
	}
	h, err := json.Marshal(header)
	if err != nil {
		return err
	}
	sealed, err := r.app.keys.Seal(body, responseAAD(r.scope))
	if err != nil {
		return err
	}
	return r.app.store.FinishIdempotent(ctx, r.scope, status, h, sealed)
}

// A stored response is sealed: it may hold a secret shown once (a new
// heartbeat's ping URL, and later signing secrets), which must not sit in
// the database in the clear for the record's 24 hours.
func responseAAD(s store.IdempotencyScope) []byte {
	return []byte("idempotency:" + s.WorkspaceID + ":" + s.KeyID + ":" + s.Key)
}

// openResponse opens a stored response. A plain JSON body is one stored
// before responses were sealed, and is replayed as it is.
func (a *App) openResponse(s store.IdempotencyScope, stored []byte) ([]byte, error) {
	if json.Valid(stored) {
		return stored, nil
	}
	return a.keys.Open(stored, responseAAD(s))
}
