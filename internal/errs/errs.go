// Package errs holds the kinds of error every layer returns for expected
// failures (not found, invalid, forbidden…), the field errors of a failed
// validation, and Wrap for naming the operation that failed. The edges (the
// API, the web app, the CLI) translate kinds in one table each; kinds carry
// no HTTP knowledge.
package errs

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies an error so the edges (API, web app, CLI) can translate it
// in one table. Kinds carry no HTTP knowledge.
type Kind int

const (
	KindInternal Kind = iota
	KindNotFound
	KindInvalid           // the request fails validation; Details lists the fields
	KindUnauthenticated   // missing, unknown or revoked credentials
	KindInsufficientScope // the key lacks a scope the action needs
	KindForbidden         // the role or workspace does not allow the action
	KindWorkspaceRequired // an account-wide key did not say which workspace
	KindQuota             // a per-workspace quota would be exceeded
	KindFeatureUnavailable
	KindConflict
	KindIdempotencyMismatch   // an Idempotency-Key reused with another request
	KindIdempotencyInProgress // an Idempotency-Key whose first request still runs
	KindRateLimited
	KindUnavailable // the service cannot do it right now; retry
)

// FieldError names one failing field by its JSON pointer (RFC 6901).
type FieldError struct {
	Pointer string
	Message string
}

// Error is the one error type use cases return for expected failures.
type Error struct {
	Kind    Kind
	Message string
	Fields  []FieldError
	// RetryAfter, when positive, is how long until the same request may
	// succeed (KindRateLimited, KindUnavailable).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if len(e.Fields) == 0 {
		return e.Message
	}
	return fmt.Sprintf("%s (%d field errors, first %s: %s)", e.Message, len(e.Fields), e.Fields[0].Pointer, e.Fields[0].Message)
}

// Errorf builds an *Error of the given kind.
func Errorf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// ErrNotFound is wrapped by stores when a row does not exist (or belongs to
// another workspace: callers must not be able to tell the two apart).
var ErrNotFound = &Error{Kind: KindNotFound, Message: "resource not found"}

// KindOf reports the kind of err, KindInternal when err carries none.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// Wrap annotates *errp with the operation that failed, keeping the chain.
// Use as: defer errs.Wrap(&err, "store.GetMonitor(%s)", id)
func Wrap(errp *error, format string, args ...any) {
	if *errp != nil {
		*errp = fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), *errp)
	}
}
