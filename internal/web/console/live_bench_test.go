package console_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/web/console"
)

// BenchmarkLiveStreams: what one tick of a workspace's live poller costs
// with 100 streams open on it (10 people, 10 tabs each) and 100 monitors
// and 20 heartbeats in the workspace. "unchanged": the read and the diff,
// nothing to send. "changed": one monitor's latest check changes (an
// UPDATE beside the store), the tick reads and diffs, and every one of
// the 100 streams has received the event, over loopback HTTP; allocations
// count the whole process, the readers included.
func BenchmarkLiveStreams(b *testing.B) {
	engines := []storetest.Engine{{Name: store.EngineSQLite, URL: "sqlite:"}}
	if pg := os.Getenv(storetest.PostgresURLEnv); pg != "" {
		engines = append(engines, storetest.Engine{Name: store.EnginePostgres, URL: pg})
	}
	const people, tabs, monitors, heartbeats = 10, 10, 100, 20
	for _, eng := range engines {
		b.Run(eng.Name, func(b *testing.B) {
			ctx := context.Background()
			dbURL := storetest.URL(b, eng)
			db := storetest.Open(b, dbURL)
			spec, err := secrets.GenerateKeySpec("k1")
			if err != nil {
				b.Fatal(err)
			}
			kr, err := secrets.ParseKeyring(spec)
			if err != nil {
				b.Fatal(err)
			}
			a := app.New(db, kr, time.Now, slog.New(slog.DiscardHandler), app.Config{})
			owner, err := a.CreateUser(ctx, app.UserRequest{Email: "owner@bench.test", Password: "owner password 1", Workspace: "bench", Role: account.RoleOwner})
			if err != nil {
				b.Fatal(err)
			}
			wsID := owner.Workspace.ID
			var ids []string
			for range monitors {
				ids = append(ids, storetest.AddMonitor(b, db, wsID, monitor.Config{}).ID)
			}
			for range heartbeats {
				storetest.NewHeartbeat(b, db, wsID, storetest.T0, 3600, 300, 0)
			}
			w, base := liveServer(b, a, console.Options{LivePoll: time.Hour}) // ticks are the benchmark's
			var streams []*stream
			for i := range people {
				email := fmt.Sprintf("watcher-%d@bench.test", i)
				if _, err := a.CreateUser(ctx, app.UserRequest{Email: email, Password: "a password for " + email, Workspace: wsID, Role: account.RoleViewer}); err != nil {
					b.Fatal(err)
				}
				c := signedInClient(b, base, email, "a password for "+email)
				for range tabs {
					s := openStream(b, c, base, "/w/"+wsID+"/live")
					if n := len(s.snapshot(b)); n != monitors+heartbeats {
						b.Fatalf("snapshot of %d subjects", n)
					}
					streams = append(streams, s)
				}
			}

			b.Run("unchanged", func(b *testing.B) {
				reads := a.StateReads()
				b.ReportAllocs()
				for b.Loop() {
					w.LiveTick(wsID)
				}
				b.ReportMetric(float64(a.StateReads()-reads)/float64(b.N), "reads/op")
			})

			n := int64(0) // the latency set last: every run of the benchmark goes on from it
			b.Run("changed", func(b *testing.B) {
				raw, update := rawUpdate(b, dbURL)
				defer raw.Close()
				reads := a.StateReads()
				b.ReportAllocs()
				for b.Loop() {
					n++
					if _, err := raw.Exec(update, n, ids[n%int64(len(ids))]); err != nil {
						b.Fatal(err)
					}
					w.LiveTick(wsID)
					for _, s := range streams {
						if ev, ok := s.next(b); !ok || ev.name != "state" {
							b.Fatalf("event %+v", ev)
						}
					}
				}
				b.ReportMetric(float64(a.StateReads()-reads)/float64(b.N), "reads/op")
			})
		})
	}
}

// rawUpdate opens the database beside the store, and the statement that
// gives a monitor a new latest latency.
func rawUpdate(b *testing.B, dbURL string) (*sql.DB, string) {
	driver, dsn := "pgx", dbURL
	if rest, ok := strings.CutPrefix(dbURL, "sqlite:"); ok {
		driver, dsn = "sqlite", strings.TrimPrefix(rest, "//")+"?_pragma=busy_timeout(10000)"
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		b.Fatal(err)
	}
	return raw, `UPDATE monitor_runtime SET last_check_at = 1, last_latency_us = $1 * 1000 WHERE monitor_id = $2`
}

// signedInClient signs email in on base and returns their browser.
func signedInClient(t testing.TB, base, email, password string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequest("POST", base+"/sign-in", strings.NewReader(url.Values{"email": {email}, "password": {password}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("signing in %s: %d %s", email, res.StatusCode, res.Header.Get("Location"))
	}
	return c
}
