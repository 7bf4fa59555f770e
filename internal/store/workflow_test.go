package store_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// openWithWorkflow opens a fresh database with app's workflow on it, for
// the tests of what a recorded change writes beyond its rows (incidents,
// events, deliveries), which app decides.
func openWithWorkflow(t *testing.T, e storetest.Engine) *store.DB {
	t.Helper()
	db := storetest.OpenDB(t, e)
	app.New(db, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Config{})
	return db
}
