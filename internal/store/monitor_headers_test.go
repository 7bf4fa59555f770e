package store_test

import (
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// The primitives of sealing plaintext headers: the filter finds configs
// with a "headers" key, by id, and a sealing lands only on the config it
// was worked out from.
func TestSealPlainHeaders(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			u := storetest.URL(t, e)
			db := storetest.Open(t, u)
			_, w := seed(t, db, "acme")
			var ms []string
			for range 3 {
				m := fullMonitor(w.ID)
				check(t, db.CreateMonitor(ctx, m, store.Sealed{}, 10))
				ms = append(ms, m.ID)
			}
			slices.Sort(ms[:2]) // the two to be found, in the filter's order
			driver, dsn := "pgx", u
			if rest, ok := strings.CutPrefix(u, "sqlite:"); ok {
				driver, dsn = "sqlite", rest
			}
			raw, err := sql.Open(driver, dsn)
			check(t, err)
			defer raw.Close()
			old := `{"url":"https://a.example","headers":{"X-Key":"plain"},"timeoutSeconds":5}`
			for _, id := range ms[:2] {
				_, err := raw.ExecContext(ctx, `UPDATE monitors SET config = $1 WHERE id = $2`, old, id)
				check(t, err)
			}

			got, err := db.PlainHeaderConfigs(ctx, "", 10)
			check(t, err)
			equal(t, got, []store.PlainHeaders{{ID: ms[0], Config: old}, {ID: ms[1], Config: old}})
			got, err = db.PlainHeaderConfigs(ctx, "", 1)
			check(t, err)
			equal(t, len(got), 1)
			got, err = db.PlainHeaderConfigs(ctx, ms[0], 10)
			check(t, err)
			equal(t, len(got), 1)
			equal(t, got[0].ID, ms[1])

			sealed := `{"url":"https://a.example","headersSet":["X-Key"],"timeoutSeconds":5}`
			var before int64
			check(t, raw.QueryRowContext(ctx, `SELECT updated_at FROM monitors WHERE id = $1`, ms[1]).Scan(&before))
			n, err := db.SealPlainHeaders(ctx, []store.HeadersSealing{
				{ID: ms[0], Was: "a config since changed", Config: sealed, Sealed: []byte("x")},
				{ID: ms[1], Was: old, Config: sealed, Sealed: []byte("sealed-headers")},
			})
			check(t, err)
			equal(t, n, 1)
			var config string
			var blob []byte
			var after int64
			check(t, raw.QueryRowContext(ctx, `SELECT config, headers_sealed, updated_at FROM monitors WHERE id = $1`, ms[1]).Scan(&config, &blob, &after))
			equal(t, config, sealed)
			equal(t, string(blob), "sealed-headers")
			equal(t, after, before+1)
			// The stale one is untouched and still found.
			got, err = db.PlainHeaderConfigs(ctx, "", 10)
			check(t, err)
			equal(t, got, []store.PlainHeaders{{ID: ms[0], Config: old}})
		})
	}
}
