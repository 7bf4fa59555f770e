package secrets

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

const maxKeyFileSize = 64 << 10

// LoadOrCreateKeyFile returns the keyring stored at path, creating the file
// with one fresh key ("k1") if it does not exist. It serves single-node
// SQLite starts without TOCSIN_SECRET_KEYS. The file holds one line in the
// TOCSIN_SECRET_KEYS format; it is created with mode 0600 (its directory,
// if created, 0700) and refused if group or others may access it.
func LoadOrCreateKeyFile(path string) (kr *Keyring, created bool, err error) {
	kr, err = loadKeyFile(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return kr, false, err
	}
	created, err = createKeyFile(path)
	if err != nil {
		return nil, false, err
	}
	// Load what is on disk: when another process won the race to create the
	// file, its key is the one to use.
	kr, err = loadKeyFile(path)
	if err != nil {
		return nil, false, err
	}
	return kr, created, nil
}

func loadKeyFile(path string) (*Keyring, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("secrets: key file: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("secrets: key file: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("secrets: key file %s is not a regular file", path)
	}
	// Windows has no Unix permission bits to check.
	if perm := info.Mode().Perm(); perm&0o077 != 0 && runtime.GOOS != "windows" {
		return nil, fmt.Errorf("secrets: key file %s has mode %04o, which lets other users read it; want 0600 (chmod 600 %s)", path, perm, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("secrets: key file %s: %w", path, err)
	}
	if len(b) > maxKeyFileSize {
		return nil, fmt.Errorf("secrets: key file %s is larger than %d bytes", path, maxKeyFileSize)
	}
	kr, err := parseKeyring(string(b))
	if err != nil {
		return nil, fmt.Errorf("secrets: key file %s: %w", path, err)
	}
	return kr, nil
}

// createKeyFile writes a new key to a temporary file and hard-links it into
// place, so the file appears complete or not at all and an existing file is
// never replaced. It reports false if another process created path first.
func createKeyFile(path string) (bool, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return false, fmt.Errorf("secrets: key file directory: %w", err)
	}
	spec, err := GenerateKeySpec("k1")
	if err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(dir, ".tocsin-key-*") // mode 0600
	if err != nil {
		return false, fmt.Errorf("secrets: key file: %w", err)
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName)
	_, err = tmp.WriteString(spec + "\n")
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, fmt.Errorf("secrets: key file: %w", err)
	}
	if err := os.Link(tmpName, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("secrets: key file: %w", err)
	}
	// Losing the directory entry in a crash would lose every secret sealed
	// under the key, so make it durable before anything is sealed.
	if err := syncDir(dir); err != nil {
		return true, fmt.Errorf("secrets: key file directory: %w", err)
	}
	return true, nil
}

func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil // directories cannot be opened for sync there
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
