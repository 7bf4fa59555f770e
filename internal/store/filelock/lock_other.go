//go:build !unix

package filelock

import "os"

// tryLock: no advisory locks here; running one server per SQLite
// database is up to the operator.
func tryLock(*os.File, bool) (bool, error) { return true, nil }

func unlockFile(*os.File) error { return nil }
