package main

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDataFilesArePrivate: serve leaves the data dir 0700 and the database,
// its WAL and shared-memory files and its lock files 0600, tightening a dir
// and a database left open by an earlier version.
func TestDataFilesArePrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "tocsin.db")
	if err := os.WriteFile(db, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	startServe(t, map[string]string{"TOCSIN_DATA_DIR": dir})
	want := map[string]os.FileMode{dir: 0o700, db: 0o600, db + "-wal": 0o600, db + "-shm": 0o600, filepath.Join(dir, "secret.key"): 0o600,
		db + ".lock": 0o600, db + "-admin.lock": 0o600}
	for p, mode := range want {
		fi, err := os.Stat(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s is %v, want %v", filepath.Base(p), fi.Mode().Perm(), mode)
		}
	}
}

func TestSecretKeyCommand(t *testing.T) {
	t.Parallel()
	out, _, err := cli(t, nil, "secret-key")
	if err != nil || !regexp.MustCompile(`^k1:[0-9a-f]{64}\n$`).MatchString(out) {
		t.Fatalf("secret-key: %q %v", out, err)
	}
	out, _, err = cli(t, nil, "secret-key", "k2")
	if err != nil || !strings.HasPrefix(out, "k2:") {
		t.Fatalf("secret-key k2: %q %v", out, err)
	}
	for _, help := range []string{"-h", "--help"} {
		out, errOut, err := cli(t, nil, "secret-key", help)
		if err != nil || out != "" || !strings.Contains(errOut, "Usage: tocsin secret-key") {
			t.Errorf("secret-key %s printed %q (stderr %q, err %v); want usage and no key", help, out, errOut, err)
		}
	}
	for _, bad := range [][]string{{"-x"}, {"a", "b"}} {
		out, _, err := cli(t, nil, append([]string{"secret-key"}, bad...)...)
		if !errors.Is(err, errUsage) || out != "" {
			t.Errorf("secret-key %v: %q %v; want a usage error and no key", bad, out, err)
		}
	}
}
