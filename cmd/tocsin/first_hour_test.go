package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// engineEnv is the environment of a fresh, empty database on eng: a data
// dir, and for PostgreSQL its URL and a keyring.
func engineEnv(t *testing.T, eng storetest.Engine) map[string]string {
	t.Helper()
	env := map[string]string{"TOCSIN_DATA_DIR": t.TempDir()}
	if eng.Name == "postgres" {
		env["TOCSIN_DATABASE_URL"] = storetest.EmptyURL(t, eng)
		out, _, err := cli(t, env, "secret-key")
		if err != nil {
			t.Fatal(err)
		}
		env["TOCSIN_SECRET_KEYS"] = strings.TrimSpace(out)
	}
	return env
}

// keyScopes is the SCOPES column of `key list` for the user's only key.
func keyScopes(t *testing.T, env map[string]string, email string) string {
	t.Helper()
	out, errOut, err := cli(t, env, "key", "list", "--email", email)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err != nil || len(lines) != 2 {
		t.Fatalf("key list: %v\n%s%s", err, out, errOut)
	}
	f := strings.Fields(lines[1])
	return f[len(f)-1]
}

// TestKeyCreateScopeAll: --scope all is every scope the role grants in the
// workspace, and stands alone.
func TestKeyCreateScopeAll(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := engineEnv(t, eng)
			startServe(t, env)
			ownerKey(t, env, "all")
			if got, want := keyScopes(t, env, "owner@localhost"), "incidents:read,incidents:write,metrics:read,monitors:read,monitors:write,"+
				"notifications:read,notifications:write,status_pages:read,status_pages:write"; got != want {
				t.Errorf("owner's all: %s, want %s", got, want)
			}
			if _, errOut, err := cli(t, env, "user", "create", "--email", "v@example.com", "--role", "viewer"); err != nil {
				t.Fatal(err, errOut)
			}
			if _, errOut, err := cli(t, env, "key", "create", "--email", "v@example.com", "--workspace", "default", "--scope", "all"); err != nil {
				t.Fatal(err, errOut)
			}
			want := "incidents:read,metrics:read,monitors:read,notifications:read,status_pages:read"
			if got := keyScopes(t, env, "v@example.com"); got != want {
				t.Errorf("viewer's all: %s, want %s", got, want)
			}
			out, _, err := cli(t, env, "key", "create", "--email", "owner@localhost", "--workspace", "default", "--scope", "all", "--scope", "monitors:read")
			if err == nil || out != "" || !strings.Contains(err.Error(), `"all" stands alone`) {
				t.Errorf("all with another scope: %v %q", err, out)
			}
		})
	}
}

// TestServeBusyPort: serve binds its port before the first run's setup, so
// a busy port stops it with a plain error and leaves no data dir behind.
func TestServeBusyPort(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := filepath.Join(t.TempDir(), "data")
	_, _, err = cli(t, map[string]string{"TOCSIN_DATA_DIR": dir}, "serve", "--listen", ln.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "listen tcp "+ln.Addr().String()+": address already in use") ||
		!strings.Contains(err.Error(), "--listen") {
		t.Fatalf("serve on a busy port: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("serve on a busy port left the data dir behind: %v", err)
	}
}

// TestAdminCommandsNeedADatabase: pointed where there is no database, the
// operator commands say so plainly and create nothing; migrate still
// creates one. Each names the database it used on stderr.
func TestAdminCommandsNeedADatabase(t *testing.T) {
	t.Parallel()
	commands := [][]string{
		{"user", "create", "--email", "a@example.com"},
		{"user", "reset-password", "--email", "a@example.com"},
		{"key", "create", "--email", "a@example.com", "--workspace", "default", "--scope", "all"},
		{"key", "list", "--email", "a@example.com"},
		{"key", "revoke", "--id", "key_x"},
	}
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := engineEnv(t, eng)
			dir := filepath.Join(env["TOCSIN_DATA_DIR"], "data")
			env["TOCSIN_DATA_DIR"] = dir
			for _, args := range commands {
				out, errOut, err := cli(t, env, args...)
				want := "no Tocsin database in " + dir + "; pass --data-dir or TOCSIN_DATABASE_URL"
				if eng.Name == "postgres" {
					want = "no Tocsin database at "
				}
				if err == nil || !strings.HasPrefix(err.Error(), want) || out != "" {
					t.Errorf("%v: %v, stdout %q; want %q", args, err, out, want)
				}
				if strings.Contains(errOut, "SELECT") || (err != nil && strings.Contains(err.Error(), "SQL")) {
					t.Errorf("%v: SQL in the error: %v %s", args, err, errOut)
				}
				if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
					t.Fatalf("%v left %s behind: %v", args, dir, err)
				}
			}
			if out, errOut, err := cli(t, env, "migrate"); err != nil || !strings.Contains(out, "up to date") {
				t.Fatalf("migrate: %v %s", err, errOut)
			}
			_, errOut, err := cli(t, env, "user", "create", "--email", "a@example.com")
			wantUsing := "using SQLite database " + filepath.Join(dir, "tocsin.db") + "\n"
			if eng.Name == "postgres" {
				wantUsing = "using PostgreSQL database postgres://"
			}
			if err != nil || !strings.HasPrefix(errOut, wantUsing) {
				t.Errorf("user create after migrate: %v, stderr %q; want it to begin %q", err, errOut, wantUsing)
			}
		})
	}
}

// dbURL is the database a test's environment names.
func dbURL(env map[string]string) string {
	if u := env["TOCSIN_DATABASE_URL"]; u != "" {
		return u
	}
	return "sqlite:" + filepath.Join(env["TOCSIN_DATA_DIR"], "tocsin.db")
}

// TestUserResetPassword: the new one-time password replaces the old one,
// stored as argon2id, and must be changed at the next sign-in.
func TestUserResetPassword(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := engineEnv(t, eng)
			s := startServe(t, env)
			old := regexp.MustCompile(`One-time password:\s+(\S+)`).FindStringSubmatch(s.stdout.String())
			if old == nil {
				t.Fatalf("no one-time password:\n%s", s.stdout.String())
			}
			out, errOut, err := cli(t, env, "user", "reset-password", "--email", "OWNER@localhost")
			pw := strings.TrimSpace(out)
			if err != nil || len(pw) < 16 || strings.Contains(pw, " ") || !strings.Contains(errOut, "one-time password") {
				t.Fatalf("reset-password: %v %q %q", err, out, errOut)
			}
			u, err := storetest.Open(t, dbURL(env)).UserByEmail(context.Background(), "owner@localhost")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(u.PasswordHash, "$argon2id$") || !u.MustChangePassword {
				t.Errorf("stored: %.12s… must change %v", u.PasswordHash, u.MustChangePassword)
			}
			if ok, err := secrets.VerifyPassword(u.PasswordHash, pw); !ok || err != nil {
				t.Errorf("the new password does not verify: %v", err)
			}
			if ok, _ := secrets.VerifyPassword(u.PasswordHash, old[1]); ok {
				t.Error("the old password still verifies")
			}
			for _, email := range []string{"nobody@example.com", ""} {
				out, _, err := cli(t, env, "user", "reset-password", "--email", email)
				if err == nil || out != "" || strings.Contains(err.Error(), "sql") {
					t.Errorf("reset-password for %q: %v %q", email, err, out)
				}
			}
		})
	}
}

// TestUserCreateExistingPerson: user create for an e-mail that has an
// account adds that person to the workspace, with no new password, and
// refuses a membership they already have in plain words.
func TestUserCreateExistingPerson(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := engineEnv(t, eng)
			startServe(t, env)
			out, errOut, err := cli(t, env, "user", "create", "--email", "owner@localhost", "--workspace", "ops", "--role", "editor")
			if err != nil || out != "" || !strings.Contains(errOut, "already had an account: added them to workspace ops") {
				t.Fatalf("user create for the owner: %v, stdout %q, stderr %q", err, out, errOut)
			}
			if _, errOut, err := cli(t, env, "key", "create", "--email", "owner@localhost", "--workspace", "ops", "--scope", "monitors:write"); err != nil {
				t.Fatalf("a key in the workspace the owner joined: %v %s", err, errOut)
			}
			for ws, want := range map[string]string{
				"default": "owner@localhost is already a member of default (role owner)",
				"ops":     "owner@localhost is already a member of ops (role editor)",
			} {
				out, _, err := cli(t, env, "user", "create", "--email", "Owner@localhost", "--workspace", ws, "--role", "viewer")
				if err == nil || err.Error() != want || out != "" {
					t.Errorf("again in %s: %v %q; want %q", ws, err, out, want)
				}
			}
		})
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version"} {
		out, _, err := cli(t, nil, arg)
		if err != nil || !regexp.MustCompile(`^tocsin \S+ commit \S+( \(modified\))?\n$`).MatchString(out) {
			t.Errorf("%s: %v %q", arg, err, out)
		}
	}
}

// TestSubcommandHelp: each command's -h lists its own flags and no others.
func TestSubcommandHelp(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args       []string
		has, lacks []string
	}{
		{[]string{"key", "create"}, []string{"-email", "-scope", "-data-dir", "-database-url"}, []string{"-listen", "-smtp-url", "-secret-keys", "-rate-limit"}},
		{[]string{"user", "reset-password"}, []string{"-email", "-data-dir"}, []string{"-listen", "-workspace", "-secret-keys"}},
		{[]string{"migrate"}, []string{"-data-dir", "-secret-keys"}, []string{"-listen", "-email"}},
		{[]string{"serve"}, []string{"-listen", "-smtp-url", "-data-dir"}, []string{"-email"}},
	} {
		dir := filepath.Join(t.TempDir(), "data")
		out, errOut, err := cli(t, map[string]string{"TOCSIN_DATA_DIR": dir}, append(c.args, "-h")...)
		if err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%v -h: %v", c.args, err)
		}
		if out != "" {
			t.Errorf("%v -h wrote to stdout: %q", c.args, out)
		}
		for _, f := range c.has {
			if !strings.Contains(errOut, "  "+f+" ") && !strings.Contains(errOut, "  "+f+"\n") {
				t.Errorf("%v -h lacks %s:\n%s", c.args, f, errOut)
			}
		}
		for _, f := range c.lacks {
			if strings.Contains(errOut, "  "+f+" ") || strings.Contains(errOut, "  "+f+"\n") {
				t.Errorf("%v -h lists %s, not its flag:\n%s", c.args, f, errOut)
			}
		}
		if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%v -h made the data dir", c.args)
		}
	}
}

// TestHealthcheck: healthcheck passes against a running serve (found from
// TOCSIN_LISTEN, a wildcard host meaning loopback) and fails with a one-line
// reason against a closed port.
func TestHealthcheck(t *testing.T) {
	t.Parallel()
	s := startServe(t, map[string]string{"TOCSIN_DATA_DIR": t.TempDir()})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.url, "http://"))
	if out, _, err := cli(t, map[string]string{"TOCSIN_LISTEN": ":" + port}, "healthcheck"); err != nil || out != "healthy\n" {
		t.Errorf("healthcheck on a running serve: %v %q", err, out)
	}
	if _, _, err := cli(t, nil, "healthcheck", "--url", s.url+"/healthz"); err != nil {
		t.Errorf("healthcheck --url: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	out, _, err := cli(t, nil, "healthcheck", "--listen", closed)
	if err == nil || out != "" || !strings.HasPrefix(err.Error(), "unhealthy: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("healthcheck on a closed port: %v %q", err, out)
	}
	if _, _, err := cli(t, nil, "healthcheck", "--url", s.url+"/api/v1/nothing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("healthcheck on a 404: %v", err)
	}
}

// TestMetricsListen: by default /metrics is on the main address; with
// --metrics-listen it is on that address only.
func TestMetricsListen(t *testing.T) {
	t.Parallel()
	get := func(url string) (int, string) {
		t.Helper()
		res, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	s := startServe(t, map[string]string{"TOCSIN_DATA_DIR": t.TempDir()})
	if code, body := get(s.url + "/metrics"); code != 200 || !strings.Contains(body, "go_goroutines") || !strings.Contains(body, "tocsin_workspace_state_reads_total") {
		t.Errorf("default /metrics: %d", code)
	}

	s = startServe(t, map[string]string{"TOCSIN_DATA_DIR": t.TempDir(), "TOCSIN_METRICS_LISTEN": "127.0.0.1:0"})
	m := regexp.MustCompile(`msg="serving /metrics" addr=(http://[0-9.:]+/metrics)`).FindStringSubmatch(s.logs.String())
	if m == nil {
		t.Fatalf("no metrics address logged:\n%s", s.logs.String())
	}
	if code, body := get(m[1]); code != 200 || !strings.Contains(body, "tocsin_checks_in_flight") && !strings.Contains(body, "go_goroutines") {
		t.Errorf("/metrics on its own address: %d", code)
	}
	if code, _ := get(s.url + "/metrics"); code != 404 {
		t.Errorf("/metrics still on the main address with --metrics-listen: %d", code)
	}
	if code, _ := get(strings.TrimSuffix(m[1], "/metrics") + "/healthz"); code != 404 {
		t.Errorf("the metrics address serves more than /metrics: %d", code)
	}
}

// shellWords splits a line as a POSIX shell would, for the plain words and
// single quotes shellQuote writes.
func shellWords(s string) []string {
	var words []string
	var w strings.Builder
	in, started := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			in, started = !in, true
		case r == ' ' && !in:
			if started {
				words = append(words, w.String())
			}
			w.Reset()
			started = false
		default:
			w.WriteRune(r)
			started = true
		}
	}
	if started {
		words = append(words, w.String())
	}
	return words
}

// TestBannerCommandsWork: the key create command serve prints on first
// start runs as printed, pointed at the same database even when serve was
// given it by flag and the command's environment does not name it.
func TestBannerCommandsWork(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			t.Parallel()
			env := engineEnv(t, eng)
			dir := filepath.Join(env["TOCSIN_DATA_DIR"], "my data")
			args := []string{"--data-dir", dir}
			if u := env["TOCSIN_DATABASE_URL"]; u != "" {
				args = append(args, "--database-url", u)
			}
			s := startServe(t, map[string]string{"TOCSIN_SECRET_KEYS": env["TOCSIN_SECRET_KEYS"]}, args...)
			var printed string
			for _, line := range strings.Split(s.stdout.String(), "\n") {
				if strings.HasPrefix(strings.TrimSpace(line), self+" key create") {
					printed = strings.TrimSpace(line)
				}
			}
			if printed == "" {
				t.Fatalf("no key create command printed starting %q:\n%s", self, s.stdout.String())
			}
			words := shellWords(strings.TrimPrefix(printed, self))
			key, errOut, err := cli(t, nil, words...)
			if err != nil || !strings.HasPrefix(key, "tsk_") {
				t.Fatalf("the printed %q: %v %q\n%s", printed, err, key, errOut)
			}
			if r := do(t, "GET", s.url+"/api/v1/monitors", strings.TrimSpace(key), ""); r.StatusCode != 200 {
				t.Errorf("the key the printed command made: %d", r.StatusCode)
			}
		})
	}
	if got := invokedAs("/tmp/go-build123/b001/exe/tocsin"); got != "go run ./cmd/tocsin" {
		t.Errorf("under go run: %q", got)
	}
	for arg0, want := range map[string]string{"./tocsin": "./tocsin", "tocsin": "tocsin", "/opt/my tools/tocsin": `'/opt/my tools/tocsin'`} {
		if got := invokedAs(arg0); got != want {
			t.Errorf("invokedAs(%q) = %q, want %q", arg0, got, want)
		}
	}
}

// TestUncleanAPIPathsAnswerJSON: serve sends every path under /api/v1 to
// the API, which answers an unclean one in its error shape; serve's own
// mux would have redirected it with an HTML body.
func TestUncleanAPIPathsAnswerJSON(t *testing.T) {
	t.Parallel()
	s := startServe(t, map[string]string{"TOCSIN_DATA_DIR": t.TempDir()})
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/api/v1//monitors", "/api/v1/./monitors", "/api/v1/x/../monitors", "/api/v1"} {
		res, err := client.Get(s.url + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 404 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || !strings.Contains(string(body), `"not_found"`) {
			t.Errorf("GET %s: %d %s %s", p, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}
	if res, err := client.Get(s.url + "/healthz"); err != nil || res.StatusCode != 200 {
		t.Errorf("healthz beside it: %v %v", res, err)
	}
}
