package scheduler_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// openDB opens a fresh database with app's workflow on it: what a state
// change writes beyond its row, and a heartbeat's state machine, are app's.
func openDB(t testing.TB, e storetest.Engine) *store.DB {
	t.Helper()
	db := storetest.OpenDB(t, e)
	app.New(db, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{})
	return db
}
