package seed

import (
	"context"
	"log/slog"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/store"
)

// CountPings counts the pings stored in the database at dbURL as a new
// server process finds them: on SQLite, with the journal a killed process
// left replayed by the application's rules, as serve replays it.
func CountPings(ctx context.Context, dbURL string) (int64, error) {
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	a := app.New(db, nil, nil, slog.New(slog.DiscardHandler), app.Config{})
	if err := a.FlushPings(ctx); err != nil {
		return 0, err
	}
	return db.CountPings(ctx)
}
