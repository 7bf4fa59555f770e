package secrets

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

func TestKeyFileCreatedThenReloaded(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, "secret.key")

	kr, created, err := LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatalf("LoadOrCreateKeyFile: %v", err)
	}
	if !created {
		t.Error("created = false for a new file")
	}
	if kr.PrimaryID() != "k1" {
		t.Errorf("PrimaryID = %q, want k1", kr.PrimaryID())
	}
	if runtime.GOOS != "windows" {
		assertMode(t, path, 0o600)
		assertMode(t, dir, 0o700)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if line := strings.TrimSuffix(string(b), "\n"); strings.Contains(line, "\n") || !strings.HasPrefix(line, "k1:") || len(line) != 3+64 {
		t.Errorf("key file is not one k1:<64 hex> line (%d bytes)", len(b))
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the key file", len(entries))
	}

	ct, err := kr.Seal([]byte("smtp-password"), []byte("aad"))
	if err != nil {
		t.Fatal(err)
	}
	again, created, err := LoadOrCreateKeyFile(path)
	if err != nil {
		t.Fatalf("reload: %v", err)
	}
	if created {
		t.Error("created = true for an existing file")
	}
	pt, err := again.Open(ct, []byte("aad"))
	if err != nil || string(pt) != "smtp-password" {
		t.Errorf("reloaded key does not open the old ciphertext: %q, %v", pt, err)
	}
}

func TestKeyFileConcurrentCreatorsAgree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	const n = 8
	rings := make([]*Keyring, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			kr, _, err := LoadOrCreateKeyFile(path)
			if err != nil {
				t.Errorf("LoadOrCreateKeyFile: %v", err)
				return
			}
			rings[i] = kr
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	ct, _ := rings[0].Seal([]byte("x"), nil)
	for i, kr := range rings {
		if _, err := kr.Open(ct, nil); err != nil {
			t.Errorf("ring %d holds a different key: %v", i, err)
		}
	}
}

func TestKeyFileLoosePermissionsRejected(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		path := filepath.Join(t.TempDir(), "secret.key")
		if err := os.WriteFile(path, []byte("k1:"+hexA+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, _, err := LoadOrCreateKeyFile(path)
		if err == nil {
			t.Errorf("mode %04o accepted", mode)
			continue
		}
		if !strings.Contains(err.Error(), "0600") || strings.Contains(err.Error(), hexA) {
			t.Errorf("mode %04o: unhelpful or leaky error: %v", mode, err)
		}
	}
}

func TestKeyFileExistingWithRotation(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	if err := os.WriteFile(path, []byte("k2:"+hexB+",k1:"+hexA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kr, created, err := LoadOrCreateKeyFile(path)
	if err != nil || created {
		t.Fatalf("LoadOrCreateKeyFile = created %v, %v", created, err)
	}
	if kr.PrimaryID() != "k2" {
		t.Errorf("PrimaryID = %q, want k2", kr.PrimaryID())
	}
}

func TestKeyFileMalformed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secret.key")
	if err := os.WriteFile(path, []byte("k1:"+hexA[:40]+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := LoadOrCreateKeyFile(path)
	if err == nil {
		t.Fatal("malformed key file accepted")
	}
	if !strings.Contains(err.Error(), path) || strings.Contains(err.Error(), hexA[:40]) {
		t.Errorf("error should name the file and not the key: %v", err)
	}
}

func TestKeyFileIsDirectory(t *testing.T) {
	path := t.TempDir()
	if _, _, err := LoadOrCreateKeyFile(path); err == nil {
		t.Error("a directory was accepted as a key file")
	}
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := info.Mode().Perm(); got != want {
		t.Errorf("%s has mode %04o, want %04o", filepath.Base(path), got, want)
	}
}
