package store_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
// benchmark (`go run ./bench pings`) is too noisy to show step by step:
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
			db := openWithWorkflow(b, e)
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
				outs, _, err := recordPings(db, batch)
				if err != nil {
					b.Fatal(err)
				}
				if !outs[0].Found {
					b.Fatal("a ping found no heartbeat")
				}
				if _, err := applyPings(db); err != nil {
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

// BenchmarkPingBatches is what a batch of pings costs by its size, on
// PostgreSQL: the CPU time of this process (the store's side of it) and of
// the PostgreSQL server's processes on this machine (its backends, WAL
// writer, checkpointer and autovacuum), per ping. Fitting cost = per batch
// + per ping × size over the sizes separates what a transaction costs from
// what each ping adds, which is what the ping writers' batching and
// pipelining are about (docs/benchmarks.md, "Pings"). Batches are spread
// over 10,000 heartbeats, each pinged once before timing (its first ping
// changes its state). It needs a local PostgreSQL server:
//
//	TOCSIN_TEST_POSTGRES_URL=… go test ./internal/store -run '^$' -bench PingBatches -benchtime 20000x
func BenchmarkPingBatches(b *testing.B) {
	pg := os.Getenv(storetest.PostgresURLEnv)
	if pg == "" {
		b.Skip("PostgreSQL only: set " + storetest.PostgresURLEnv)
	}
	db := openWithWorkflow(b, storetest.Engine{Name: store.EnginePostgres, URL: pg})
	_, w := seed(b, db, "bench")
	const heartbeats = 10_000
	tokens := make([][]byte, heartbeats)
	for i := range tokens {
		tokens[i] = heartbeat.HashToken(newHeartbeat(b, db, w.ID, t0, 3600, 300, 0).Token)
	}
	at := t0
	arrival := func(token []byte) heartbeat.Arrival {
		at = at.Add(time.Microsecond)
		return heartbeat.Arrival{TokenHash: token, Ping: heartbeat.Ping{Signal: heartbeat.SignalSuccess, ExitCode: -1, At: at},
			Method: "GET", Client: "127.0.0.1", UserAgent: "Go-http-client/1.1"}
	}
	for i := 0; i < heartbeats; i += 100 {
		batch := make([]heartbeat.Arrival, 0, 100)
		for _, t := range tokens[i : i+100] {
			batch = append(batch, arrival(t))
		}
		if _, _, err := recordPings(db, batch); err != nil {
			b.Fatal(err)
		}
	}
	for _, size := range []int{1, 8, 32, 128} {
		b.Run(fmt.Sprintf("batch=%d", size), func(b *testing.B) {
			batch := make([]heartbeat.Arrival, size)
			pg0, self0 := postgresCPU(), processCPU()
			b.ResetTimer()
			for n := 0; n < b.N; n += size {
				for i := range batch {
					batch[i] = arrival(tokens[rand.IntN(heartbeats)])
				}
				if _, _, err := recordPings(db, batch); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			pings := float64((b.N + size - 1) / size * size)
			b.ReportMetric(float64((processCPU()-self0).Microseconds())/pings, "client-µs/ping")
			b.ReportMetric(float64((postgresCPU()-pg0).Microseconds())/pings, "pg-µs/ping")
		})
	}
}

// processCPU is this process's CPU time, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// postgresCPU is the CPU time of every process on this machine named
// postgres, from /proc (Linux; 0 elsewhere).
func postgresCPU() time.Duration {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var ticks uint64
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || end < open || string(b[open+1:end]) != "postgres" {
			continue
		}
		f := strings.Fields(string(b[end+1:]))
		if len(f) < 13 {
			continue
		}
		user, _ := strconv.ParseUint(f[11], 10, 64)
		system, _ := strconv.ParseUint(f[12], 10, 64)
		ticks += user + system
	}
	return time.Duration(ticks) * 10 * time.Millisecond // USER_HZ is 100 on Linux
}
