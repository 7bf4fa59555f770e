package console_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/web/public"
)

// browserFrom is a browser whose connections come from addr, a loopback
// address other than 127.0.0.1: the server sees it as the peer, so it is
// the client address every per-address limit uses.
func (e *env) browserFrom(email, addr string) *person {
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(addr)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext}
	e.T.Cleanup(tr.CloseIdleConnections)
	return &person{t: e.T, e: e, email: email, c: &http.Client{Jar: jar, Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// TestWebAppSignInLockout: someone who knows an e-mail and guesses at its
// password from one address, six times a minute, spends the account's
// limit and is refused; all the while the owner signs in from another
// address with the right password.
func TestWebAppSignInLockout(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		const email, password = "owner@lockout.test", "the owner's own password"
		if _, err := e.App.CreateUser(context.Background(), app.UserRequest{Email: email, Password: password,
			Workspace: e.WsA.ID, Role: account.RoleEditor}); err != nil {
			t.Fatal(err)
		}
		guesser := e.browserFrom(email, "127.0.0.2")
		var wrong, refused int
		for i := range 36 { // six minutes
			r := guesser.post("/sign-in", form("email", email, "password", fmt.Sprint("guess number ", i)))
			switch {
			case r.status == http.StatusUnauthorized && strings.Contains(r.body, "Wrong e-mail or password."):
				wrong++
			case r.status == http.StatusTooManyRequests && r.header.Get("Retry-After") != "":
				refused++
			default:
				t.Fatalf("guess %d: %d %.300s", i, r.status, r.body)
			}
			if i%3 == 0 {
				owner := e.browserFrom(email, "127.0.0.3")
				owner.signIn(password)
				if r := owner.get("/account"); r.status != http.StatusOK {
					t.Fatalf("the owner's session after %d guesses: %d", wrong, r.status)
				}
			}
			e.Clock.Advance(10 * time.Second)
		}
		if refused < 10 || wrong > 30 {
			t.Fatalf("the guessing address had %d wrong passwords checked and %d refused", wrong, refused)
		}
		// Just after a guess, the guesser's address is refused even the
		// right password.
		guesser.post("/sign-in", form("email", email, "password", "one more guess"))
		if r := guesser.post("/sign-in", form("email", email, "password", password)); r.status != http.StatusTooManyRequests {
			t.Fatalf("the right password from the guessing address: %d", r.status)
		}
		// A third address, with no failures here, signs in.
		e.browserFrom(email, "127.0.0.4").signIn(password)
	})
}

var (
	totpSecretRE  = regexp.MustCompile(`data-copy-value="([A-Z2-7]+)"`)
	totpPendingRE = regexp.MustCompile(`name="pending" value="([^"]+)"`)
)

// TestWebAppTOTPReplay: through the pages, a TOTP code completes one
// sign-in: the code that turned two-factor sign-in on does not sign in,
// the same code twice in its step signs in once, a code of the next step
// passes, and of two browsers racing with one code, one gets in.
func TestWebAppTOTPReplay(t *testing.T) {
	forEachEngine(t, public.Options{}, func(t *testing.T, e *env) {
		const email = "totp@a.test"
		password := "a password for " + email
		p := e.member(email, account.RoleViewer)
		// The clock at the start of a step, so a step's codes stay
		// current while the test runs.
		const step = 30 * time.Second
		e.Clock.Advance(step - time.Duration(e.Clock.Now().UnixNano()%int64(step)))
		var secret string
		code := func(steps int) string {
			t.Helper()
			c, err := totp.GenerateCode(secret, e.Clock.Now().Add(time.Duration(steps)*step))
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		// halfway signs a fresh browser in with the password only.
		halfway := func() *person {
			t.Helper()
			b := e.browser(email)
			if r := b.post("/sign-in", form("email", email, "password", password)); r.status != 303 || r.header.Get("Location") != "/sign-in/two-factor" {
				t.Fatalf("password with two-factor on: %d %q", r.status, r.header.Get("Location"))
			}
			return b
		}
		second := func(b *person, c string) int {
			r := b.post("/sign-in/two-factor", form("code", c))
			if r.status == http.StatusUnauthorized && !strings.Contains(r.body, "used already") {
				t.Errorf("a refused code: %.300s", r.body)
			}
			return r.status
		}

		r := p.get("/account/two-factor/setup")
		found, pending := totpSecretRE.FindStringSubmatch(r.body), totpPendingRE.FindStringSubmatch(r.body)
		if r.status != 200 || found == nil || pending == nil {
			t.Fatalf("setup page: %d %.300s", r.status, r.body)
		}
		secret = found[1]
		if r := p.post("/account/two-factor/setup", form("pending", pending[1], "code", code(0))); r.status != 200 ||
			!strings.Contains(r.body, "recovery") {
			t.Fatalf("turning two-factor on: %d %.300s", r.status, r.body)
		}

		b := halfway()
		if s := second(b, code(0)); s != http.StatusUnauthorized {
			t.Fatalf("the code that turned two-factor on: %d", s)
		}
		if s := second(b, code(1)); s != http.StatusSeeOther {
			t.Fatalf("the next step's code: %d", s)
		}
		if r := b.get("/account"); r.status != 200 {
			t.Fatalf("signed in with two factors: %d", r.status)
		}
		if s := second(halfway(), code(1)); s != http.StatusUnauthorized {
			t.Fatalf("the same code again: %d", s)
		}

		e.Clock.Advance(5 * time.Minute) // the second factor's limit refills
		racers := []*person{halfway(), halfway()}
		c := code(0)
		statuses := make([]int, len(racers))
		var wg sync.WaitGroup
		for i, b := range racers {
			wg.Go(func() { statuses[i] = second(b, c) })
		}
		wg.Wait()
		if !(statuses[0] == 303 && statuses[1] == 401 || statuses[0] == 401 && statuses[1] == 303) {
			t.Fatalf("two browsers with one code: %v, want one 303 and one 401", statuses)
		}
	})
}
