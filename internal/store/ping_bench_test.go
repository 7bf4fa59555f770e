package store_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// BenchmarkRecordPings is the store's share of a ping, without HTTP: batches
// of 16 pings spread over 2,000 heartbeats, as the ping writer hands them
// over, with the journal applied (SQLite) inside the timed loop. It is the
// quick, quiet measure of the writer's cost per ping that the end-to-end
// benchmark (bench/pingbench) is too noisy to show step by step:
//
//	go test ./internal/store -run '^$' -bench RecordPings -benchmem
func BenchmarkRecordPings(b *testing.B) {
	engines := []storetest.Engine{{Name: store.EngineSQLite, URL: "sqlite:"}}
	if pg := os.Getenv(storetest.PostgresURLEnv); pg != "" {
		engines = append(engines, storetest.Engine{Name: store.EnginePostgres, URL: pg})
	}
	const heartbeats, batchSize = 2000, 16
	for _, e := range engines {
		b.Run(e.Name, func(b *testing.B) {
			db := storetest.OpenDB(b, e)
			_, w := seed(b, db, "bench")
			tokens := make([][]byte, heartbeats)
			for i := range tokens {
				h := newHeartbeat(b, db, w.ID, t0, 3600, 300, 0)
				tokens[i] = heartbeat.HashToken(h.Token)
			}
			batch := make([]heartbeat.Arrival, batchSize)
			at := t0
			b.ReportAllocs()
			b.ResetTimer()
			for n := 0; n < b.N; n += batchSize {
				for i := range batch {
					at = at.Add(time.Microsecond)
					batch[i] = heartbeat.Arrival{TokenHash: tokens[rand.IntN(heartbeats)],
						Ping:   heartbeat.Ping{Signal: heartbeat.SignalSuccess, ExitCode: -1, At: at},
						Method: "GET", Client: "127.0.0.1", UserAgent: "Go-http-client/1.1"}
				}
				outs, _, err := db.RecordPings(ctx, batch)
				if err != nil {
					b.Fatal(err)
				}
				if !outs[0].Found {
					b.Fatal("a ping found no heartbeat")
				}
				if _, err := db.ApplyPings(ctx); err != nil {
					b.Fatal(err)
				}
			}
			n, err := db.CountPings(ctx) // applies what is pending
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if want := int64((b.N + batchSize - 1) / batchSize * batchSize); n != want {
				b.Fatal(fmt.Sprintf("%d pings stored, want %d", n, want))
			}
		})
	}
}
