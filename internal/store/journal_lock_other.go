//go:build !unix

package store

import "os"

// lockJournal: no advisory locks here; running one server per SQLite
// database is up to the operator.
func lockJournal(string) (*os.File, error) { return nil, nil }
