package app

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// TestTOTPReplay: each TOTP time step signs in at most once (RFC 6238
// §5.2), the step that confirmed the setup included; the next step's code
// passes; of several sign-ins racing with one code, exactly one succeeds.
func TestTOTPReplay(t *testing.T) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newWebEnv(t, eng)
			// The clock at the start of a step, so a step's codes stay
			// current while the test runs.
			e.advance(30*time.Second - time.Duration(e.now().UnixNano()%int64(30*time.Second)))
			ws := e.signIn(t, "owner@acme.test", ownerPassword)
			setup, err := e.a.BeginTOTP(ctx, ws)
			check(t, err)
			_, err = e.a.ConfirmTOTP(ctx, ws, setup.Pending, code(t, setup.Secret, e.now()))
			check(t, err)

			pending := func() string {
				t.Helper()
				res, err := e.a.SignIn(ctx, SignInRequest{Email: "owner@acme.test", Password: ownerPassword, ClientAddr: "192.0.2.1"})
				check(t, err)
				if !res.NeedsSecondFactor {
					t.Fatal("no second factor asked")
				}
				return res.Token
			}
			second := func(token, c string) error {
				res, err := e.a.SecondFactor(ctx, token, c, "192.0.2.1", "")
				if err == nil && res.Token == "" {
					return fmt.Errorf("no session: %+v", res)
				}
				return err
			}
			step := func(n int) string { return code(t, setup.Secret, e.now().Add(time.Duration(n)*30*time.Second)) }

			// The confirming code, within its step: refused, and the
			// session still waits for a good one.
			tok := pending()
			wantKind(t, "the code that confirmed the setup", second(tok, step(0)), errs.KindUnauthenticated)
			// The next step's code passes (a phone a little ahead) …
			check(t, second(tok, step(1)))
			// … and after it, neither it again nor an earlier one.
			tok = pending()
			wantKind(t, "the same code again", second(tok, step(1)), errs.KindUnauthenticated)
			e.advance(30 * time.Second)
			wantKind(t, "the same code in its own step", second(tok, step(0)), errs.KindUnauthenticated)
			wantKind(t, "an earlier step's code", second(tok, step(-1)), errs.KindUnauthenticated)
			e.advance(30 * time.Second)
			check(t, second(tok, step(0)))

			// Sign-ins racing with one code: one succeeds; the others are
			// refused and their sessions still wait.
			e.advance(5 * time.Minute) // the second factor's limit refills
			const n = 6
			toks := make([]string, n)
			for i := range toks {
				toks[i] = pending()
			}
			e.advance(30 * time.Second)
			c := step(0)
			errsOf := make([]error, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() { errsOf[i] = second(toks[i], c) })
			}
			wg.Wait()
			ok, loser := 0, ""
			for i, err := range errsOf {
				if err == nil {
					ok++
					continue
				}
				wantKind(t, "a racing sign-in", err, errs.KindUnauthenticated)
				if !e.a.PendingSecondFactor(ctx, toks[i]) {
					t.Fatalf("racing sign-in %d lost its session: %v", i, err)
				}
				loser = toks[i]
			}
			if ok != 1 {
				t.Fatalf("%d of %d sign-ins with one code succeeded, want 1", ok, n)
			}
			check(t, second(loser, step(1)))
		})
	}
}
