package main

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			env := engineEnv(t, eng)
			startServe(t, env)
			ownerKey(t, env, "all")
			if got, want := keyScopes(t, env, "owner@localhost"), strings.ReplaceAll(scopeList(), ", ", ","); got != want {
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
