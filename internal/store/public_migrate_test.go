package store_test

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// Incidents from before publication are private, and the updates Tocsin
// wrote on automatic ones (their cause, their recovery) are marked so
// that status pages never show them; a person's updates are not.
func TestPublicFlagsMigration(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			before := map[string]int{store.EngineSQLite: 14, store.EnginePostgres: 16}[e.Name]
			u := storetest.EmptyURL(t, e)
			db, err := openStore(ctx, u)
			check(t, err)
			t.Cleanup(func() { db.Close() })
			if _, err := db.MigrateUpTo(ctx, before); err != nil {
				t.Fatal(err)
			}
			_, w := storetest.Seed(t, db, "acme")
			driver, dsn := "pgx", u
			if rest, ok := strings.CutPrefix(u, "sqlite:"); ok {
				driver, dsn = "sqlite", rest
			}
			raw, err := sql.Open(driver, dsn)
			check(t, err)
			defer raw.Close()
			us := func(d time.Duration) int64 { return t0.Add(d).UnixMicro() }
			for _, inc := range [][]any{
				{"inc_auto", w.ID, "db is down", "resolved", "automatic", "mon_1", "db", "refused", us(0), us(2 * time.Minute)},
				{"inc_manual", w.ID, "Slow", "investigating", "manual", "", "", "", us(0), int64(0)},
			} {
				_, err := raw.ExecContext(ctx, `INSERT INTO incidents (id, workspace_id, title, status, origin, subject_id, subject_name,
					cause, started_at, resolved_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $9, $9)`, inc...)
				check(t, err)
			}
			for _, up := range [][]any{
				{"inc_auto", "investigating", "refused", us(0)},
				{"inc_auto", "identified", "A bad deploy.", us(time.Minute)},
				{"inc_auto", "resolved", "db recovered (up)", us(2 * time.Minute)},
				{"inc_manual", "investigating", "Looking.", us(0)},
			} {
				_, err := raw.ExecContext(ctx, `INSERT INTO incident_updates (incident_id, status, message, at) VALUES ($1, $2, $3, $4)`, up...)
				check(t, err)
			}

			if _, err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			auto, err := db.GetIncident(ctx, w.ID, "inc_auto")
			check(t, err)
			manual, err := db.GetIncident(ctx, w.ID, "inc_manual")
			check(t, err)
			if auto.Public || auto.PublicTitle != "" || manual.Public || manual.PublicTitle != "" {
				t.Errorf("published by the migration: %+v %+v", auto, manual)
			}
			var marks []bool
			for _, u := range append(auto.Updates, manual.Updates...) {
				marks = append(marks, u.Automatic)
			}
			if want := []bool{true, false, true, false}; len(marks) != 4 || marks[0] != want[0] || marks[1] != want[1] ||
				marks[2] != want[2] || marks[3] != want[3] {
				t.Errorf("updates marked automatic: %v, want %v", marks, want)
			}
		})
	}
}
