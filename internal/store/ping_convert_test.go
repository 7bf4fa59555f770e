package store_test

import (
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// Pings stored as rows before pings moved into blocks are all there after
// the migration, every field kept, and new pings list after them.
func TestPingRowsConvertToBlocks(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			before := map[string]int{store.EngineSQLite: 4, store.EnginePostgres: 7}[e.Name]
			u := storetest.EmptyURL(t, e)
			db, err := openStore(ctx, u)
			check(t, err)
			t.Cleanup(func() { db.Close() })
			if _, err := db.MigrateUpTo(ctx, before); err != nil {
				t.Fatal(err)
			}
			_, w := seedBeforeQuotas(t, db, "acme")
			h := newHeartbeatBeforeQuotas(t, db, w.ID)
			other := newHeartbeatBeforeQuotas(t, db, w.ID)

			driver, dsn := "pgx", u
			if rest, ok := strings.CutPrefix(u, "sqlite:"); ok {
				driver, dsn = "sqlite", rest
			}
			raw, err := sql.Open(driver, dsn)
			check(t, err)
			defer raw.Close()
			var seq, otherSeq int64
			check(t, raw.QueryRowContext(ctx, `SELECT seq FROM heartbeat_runtime WHERE heartbeat_id = $1`, h.ID).Scan(&seq))
			check(t, raw.QueryRowContext(ctx, `SELECT seq FROM heartbeat_runtime WHERE heartbeat_id = $1`, other.ID).Scan(&otherSeq))
			insert := `INSERT INTO pings (heartbeat_seq, at, duration_us, signal, exit_code, body_truncated, ignored, run_id,
				user_agent, idem_key, method, client, body) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`
			rows := [][]any{
				{seq, t0.UnixMicro(), nil, 2, nil, false, false, "r1", "cron/1", nil, "GET", "10.0.0.1", nil},
				{otherSeq, t0.Add(time.Second).UnixMicro(), nil, 1, nil, false, true, nil, nil, nil, "GET", "10.0.0.2", nil},
				{seq, t0.Add(2 * time.Second).UnixMicro(), 2_000_000, 3, 3, true, false, "r1", nil, "k1", "POST", "10.0.0.1", []byte{0xff, 'x'}},
				{seq, t0.Add(3 * time.Second).UnixMicro(), nil, 1, 0, false, false, nil, nil, nil, "POST", "::1", []byte("all \"good\"\n")},
			}
			for _, r := range rows {
				if _, err := raw.ExecContext(ctx, insert, r...); err != nil {
					t.Fatal(err)
				}
			}

			if _, err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			got, err := db.ListPings(ctx, w.ID, h.ID, store.PingQuery{Limit: 10})
			check(t, err)
			want := []heartbeat.PingRecord{
				{At: t0.Add(3 * time.Second), Signal: heartbeat.SignalSuccess, ExitCode: 0, Duration: -1, Method: "POST", Client: "::1",
					Body: []byte("all \"good\"\n")},
				{At: t0.Add(2 * time.Second), Signal: heartbeat.SignalFail, ExitCode: 3, RunID: "r1", Duration: 2 * time.Second,
					Method: "POST", Client: "10.0.0.1", Key: "k1", Body: []byte{0xff, 'x'}, Truncated: true},
				{At: t0, Signal: heartbeat.SignalStart, ExitCode: -1, RunID: "r1", Duration: -1, Method: "GET", Client: "10.0.0.1",
					UserAgent: "cron/1"},
			}
			if len(got) != len(want) {
				t.Fatalf("after the migration %d pings, want %d: %+v", len(got), len(want), got)
			}
			for i := range want {
				g := got[i]
				g.ID = 0
				if g.At.Equal(want[i].At) {
					g.At = want[i].At
				}
				if !equalPing(g, want[i]) {
					t.Errorf("ping %d:\n got %+v\nwant %+v", i, g, want[i])
				}
			}
			o, err := db.ListPings(ctx, w.ID, other.ID, store.PingQuery{Limit: 10})
			check(t, err)
			if len(o) != 1 || !o[0].Ignored {
				t.Errorf("the other heartbeat's pings: %+v", o)
			}
			outs, _, err := recordPings(db, []heartbeat.Arrival{ping(h.Token, heartbeat.SignalSuccess, t0.Add(4*time.Second), "", "")})
			check(t, err)
			if !outs[0].Found {
				t.Fatal("a ping after the migration was not taken")
			}
			got, err = db.ListPings(ctx, w.ID, h.ID, store.PingQuery{Limit: 2})
			check(t, err)
			if len(got) != 2 || !got[0].At.Equal(t0.Add(4*time.Second)) || got[0].ID <= got[1].ID {
				t.Errorf("after a new ping: %+v", got)
			}
		})
	}
}

func equalPing(a, b heartbeat.PingRecord) bool {
	return a.ID == b.ID && a.At.Equal(b.At) && a.Signal == b.Signal && a.ExitCode == b.ExitCode && a.RunID == b.RunID &&
		a.Duration == b.Duration && a.Method == b.Method && a.Client == b.Client && a.UserAgent == b.UserAgent &&
		a.Key == b.Key && string(a.Body) == string(b.Body) && (a.Body == nil) == (b.Body == nil) &&
		a.Truncated == b.Truncated && a.Ignored == b.Ignored
}
