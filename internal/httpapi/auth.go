package httpapi

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
)

// metaScope is the Operation.Metadata key holding the scope an operation
// needs; operations without it are public.
const metaScope = "scope"

// writeErr writes the envelope from inside a huma middleware.
func writeErr(ctx huma.Context, err error) {
	r := fromError(ctx.Context(), err)
	r.Err.RequestID = requestIDFrom(ctx.Context())
	if r.status == 499 {
		return
	}
	ctx.SetHeader("Content-Type", "application/json")
	_, _ = retryHeader(ctx, "", r)
	if r.status == 401 {
		ctx.SetHeader("WWW-Authenticate", `Bearer realm="tocsin"`)
	}
	ctx.SetStatus(r.status)
	_ = json.NewEncoder(ctx.BodyWriter()).Encode(r)
}

// authenticate runs the one authorization path for every API route:
// identify the key, count the request against its rate limit, apply the
// workspace rules, then require the operation's scope.
func (s *Server) authenticate(ctx huma.Context, next func(huma.Context)) {
	scope, _ := ctx.Operation().Metadata[metaScope].(account.Scope)
	if scope == "" {
		next(ctx)
		return
	}
	c := ctx.Context()
	secret, ok := bearer(ctx.Header("Authorization"))
	if !ok {
		s.failedAuth(ctx, &errs.Error{Kind: errs.KindUnauthenticated, Message: "send an API key as Authorization: Bearer <key>"})
		return
	}
	wsHeader := strings.TrimSpace(ctx.Header("X-Workspace-Id"))
	p, err := s.app.Authenticate(c, secret, wsHeader)
	if err != nil {
		s.failedAuth(ctx, err)
		return
	}
	rs, err := s.app.TakeRate(c, "key:"+p.KeyID())
	if err != nil {
		writeErr(ctx, err)
		return
	}
	_, w := humago.Unwrap(ctx)
	setRateHeaders(w.Header(), rs)
	if !rs.Allowed {
		writeErr(ctx, &errs.Error{Kind: errs.KindRateLimited,
			Message: "rate limit of " + strconv.Itoa(rs.Limit) + " requests per minute exceeded"})
		return
	}
	actor, err := p.Actor(wsHeader)
	if err == nil {
		err = actor.Require(scope)
	}
	if err != nil {
		writeErr(ctx, err)
		return
	}
	next(huma.WithValue(ctx, actorKey, actor))
}

// failedAuth answers a request without a valid key. Such requests count
// against their client address, so a flood of bad keys meets 429s, and
// their answer carries that address's rate-limit headers.
func (s *Server) failedAuth(ctx huma.Context, err error) {
	if errs.KindOf(err) == errs.KindUnauthenticated {
		r, w := humago.Unwrap(ctx)
		if s.limitAddress(r, w.Header(), bucketAddress) {
			err = addressLimited()
		}
	}
	writeErr(ctx, err)
}

func bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func ceilSeconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int((d + time.Second - 1) / time.Second)
}

// actorFrom returns the actor the authenticate middleware admitted.
func actorFrom(ctx context.Context) app.Actor {
	a, _ := ctx.Value(actorKey).(app.Actor)
	return a
}
