//go:build unix

package store

import (
	"fmt"
	"os"
	"syscall"
)

// lockJournal takes the lock that makes this process the only one
// receiving pings into the SQLite database at path: another process with
// its own journal in memory would write over this one's pending pings.
// The lock goes with the process, however it ends.
func lockJournal(path string) (*os.File, error) {
	f, err := os.OpenFile(path+"-pings.lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another process receives pings into %s (SQLite serves one node; use PostgreSQL for several): %w", path, err)
	}
	return f, nil
}
