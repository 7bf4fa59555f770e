//go:build unix

package filelock

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an advisory lock on f without waiting, exclusive or
// shared, and reports whether it got it. flock locks belong to the open
// file, so two opens conflict even within one process, and the kernel
// drops them when the process ends, however it ends.
func tryLock(f *os.File, exclusive bool) (bool, error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func unlockFile(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
