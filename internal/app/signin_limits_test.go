package app

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/racedetector"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// attempt signs in from addr and sorts the answer: "in", "wrong" (401) or
// "limited" (429, with a wait).
func (e *webEnv) attempt(t *testing.T, email, password, addr string) string {
	t.Helper()
	res, err := e.a.SignIn(ctx, SignInRequest{Email: email, Password: password, ClientAddr: addr})
	switch {
	case res.RetryAfter > 0 && err == nil && res.Token == "":
		return "limited"
	case errs.KindOf(err) == errs.KindUnauthenticated && res.Token == "":
		return "wrong"
	case err == nil && len(res.Token) == 43:
		return "in"
	}
	t.Fatalf("sign-in from %s: %+v %v", addr, res, err)
	return ""
}

// TestSignInLimits: wrong passwords from one address spend the account's
// bucket, and still never keep out the right password from another; the
// guesser's address is refused, a fresh address gets a few tries of its
// own, right passwords cost the account nothing, and one address cannot
// spray guesses over many accounts.
func TestSignInLimits(t *testing.T) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newWebEnv(t, eng)
			const owner, guesser = "owner@acme.test", "192.0.2.2"

			// Six wrong passwords a minute from one address, for ten
			// minutes, while the owner signs in from another every 30 s.
			var guesses, refused int
			for i := range 60 {
				switch e.attempt(t, owner, fmt.Sprint("guess number ", i), guesser) {
				case "wrong":
					guesses++
				case "limited":
					refused++
				default:
					t.Fatal("a guess signed in")
				}
				if i%3 == 0 {
					if got := e.attempt(t, owner, ownerPassword, "192.0.2.3"); got != "in" {
						t.Fatalf("after %d guesses the owner's right password from another address: %s", guesses, got)
					}
				}
				e.advance(10 * time.Second)
			}
			// The guesser had the account's burst, then its refills (one
			// every 30 s, taken as soon as they came).
			if want := signInAccount.burst + 600/30 - 1; guesses < want-1 || guesses > want+1 || refused != 60-guesses {
				t.Fatalf("the guessing address had %d wrong passwords checked and %d refused, want about %d checked", guesses, refused, want)
			}

			// Just after a guess the account's bucket is spent, and the
			// guesser's address refused before any hash: even the right
			// password.
			e.attempt(t, owner, "one more guess", guesser)
			if got := e.attempt(t, owner, ownerPassword, guesser); got != "limited" {
				t.Fatalf("the guessing address with the right password: %s", got)
			}
			// An address with no failures here gets a few tries of its
			// own, then is refused like the guesser; its right password
			// cost it nothing.
			fresh := "192.0.2.4"
			if got := e.attempt(t, owner, ownerPassword, fresh); got != "in" {
				t.Fatalf("a fresh address with the right password: %s", got)
			}
			for i := range signInPair.burst {
				if got := e.attempt(t, owner, "a wrong one", fresh); got != "wrong" {
					t.Fatalf("wrong password %d from a fresh address: %s", i+1, got)
				}
			}
			if got := e.attempt(t, owner, ownerPassword, fresh); got != "limited" {
				t.Fatalf("after %d failures the fresh address: %s", signInPair.burst, got)
			}
			if got := e.attempt(t, owner, ownerPassword, "192.0.2.3"); got != "in" {
				t.Fatalf("the owner's address after another's failures: %s", got)
			}

			// Right passwords charge no account bucket: more sign-ins in a
			// row than the account's burst, all in.
			e.advance(time.Hour)
			for i := range signInAccount.burst + 1 {
				if got := e.attempt(t, owner, ownerPassword, "192.0.2.5"); got != "in" {
					t.Fatalf("right password %d in a row: %s", i+1, got)
				}
			}

			// An unknown e-mail is limited exactly like a wrong password.
			e.advance(time.Hour)
			for _, email := range []string{owner, "nobody@acme.test"} {
				var got []string
				for range signInAccount.burst + 1 {
					got = append(got, e.attempt(t, email, "not the password", "192.0.2.6"))
				}
				if got[signInAccount.burst-1] != "wrong" || got[signInAccount.burst] != "limited" {
					t.Fatalf("%s from one address: %v", email, got)
				}
			}

			// Spraying: one address, one guess at each of many accounts,
			// is refused after the address's burst, right password or not.
			e.advance(time.Hour)
			for i := range signInAddr.burst {
				if got := e.attempt(t, fmt.Sprintf("user%d@acme.test", i), "Summer2026!", "192.0.2.7"); got != "wrong" {
					t.Fatalf("guess %d of a spray: %s", i+1, got)
				}
			}
			if got := e.attempt(t, owner, ownerPassword, "192.0.2.7"); got != "limited" {
				t.Fatalf("the spraying address after %d guesses: %s", signInAddr.burst, got)
			}
			if got := e.attempt(t, owner, ownerPassword, "192.0.2.8"); got != "in" {
				t.Fatalf("another address beside the spray: %s", got)
			}
		})
	}
}

// TestSignInAnswersAlikeTiming: an e-mail without an account costs what
// a wrong password costs, password hash, limits and all, so the time of
// the answer tells nobody who has an account. Attempts alternate, each
// from a fresh address, and the median of each pair's ratio is compared,
// loosely enough for a busy machine and tightly enough to catch a skipped
// hash (a ratio near zero).
func TestSignInAnswersAlikeTiming(t *testing.T) {
	racedetector.Skip(t, "measures latency")
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			e := newWebEnv(t, eng)
			timed := func(email string, i int) time.Duration {
				start := time.Now()
				if got := e.attempt(t, email, "not the password", fmt.Sprint("198.51.100.", i)); got != "wrong" {
					t.Fatalf("attempt %d at %s: %s", i, email, got)
				}
				return time.Since(start)
			}
			var ratios []float64
			for i := range 25 {
				wrong := timed("owner@acme.test", 2*i)
				unknown := timed("nobody@acme.test", 2*i+1)
				ratios = append(ratios, float64(unknown)/float64(wrong))
			}
			slices.Sort(ratios)
			if r := ratios[len(ratios)/2]; r < 0.5 || r > 2 {
				t.Fatalf("an unknown e-mail takes %.2f times as long as a wrong password (ratios %.2f)", r, ratios)
			}
		})
	}
}
