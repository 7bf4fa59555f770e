package scheduler_test

import (
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/scheduler"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// hostileResolver is a tenant's own DNS server, on a local UDP port: it
// answers every TXT question with "ok\0\xff" and every CNAME question with
// a name holding the same bytes. It returns the address.
func hostileResolver(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	check(t, err)
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out := hostileAnswer(buf[:n]); out != nil {
				_, _ = pc.WriteTo(out, from)
			}
		}
	}()
	return pc.LocalAddr().String()
}

func hostileAnswer(query []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true})
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}
	switch q.Type {
	case dnsmessage.TypeTXT:
		_ = b.TXTResource(rh, dnsmessage.TXTResource{TXT: []string{"ok\x00\xff"}})
	case dnsmessage.TypeCNAME:
		_ = b.CNAMEResource(rh, dnsmessage.CNAMEResource{CNAME: dnsmessage.MustNewName("ev\x00\xffil.test.")})
	}
	out, _ := b.Finish()
	return out
}

// TestOneTenantsBytesStopNoOther: workspace A's DNS monitors ask A's own
// resolver, which answers bytes PostgreSQL refuses in a text column; they
// run through the real engine and store beside workspace B's HTTP
// monitors. B loses nothing — every slot of each of its monitors is
// checked and stored as up, none goes UNKNOWN — and A's observations are
// stored, down, with their answers cleaned; no write of the writer failed.
func TestOneTenantsBytesStopNoOther(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			db := openDB(t, e)
			resolver := hostileResolver(t)
			tg := newTarget(t)
			const interval = time.Second
			wsA, wsB := workspace(t, db), workspace(t, db)
			var mineA, mineB []monitor.Monitor
			for _, c := range []monitor.Config{
				{RecordName: "poison.test", RecordType: "TXT", ExpectedValues: []string{"ok"}},
				{RecordName: "poison.test", RecordType: "CNAME", ExpectedValues: []string{"good.test"}},
			} {
				c.Resolver, c.TimeoutSeconds = resolver, 2
				mineA = append(mineA, addMonitorOf(t, db, wsA, monitor.TypeDNS, c, interval))
			}
			for range 3 {
				mineB = append(mineB, addMonitor(t, db, wsB, tg.URL, interval, 2))
			}
			reg := prometheus.NewRegistry()
			// Batches mix both workspaces' observations, as a busy node's do.
			stored := newStored()
			stop := start(t, scheduler.Options{Node: "node-a", App: storedApp{appOf(db), stored}, Metrics: scheduler.NewMetrics(reg)})
			need := map[string]int{}
			for _, m := range slices.Concat(mineA, mineB) {
				need[m.ID] = 4
			}
			waitStored(t, stored, time.Minute, "four checks of each monitor", need, func(o monitor.Observation) bool {
				return o.Reason != monitor.ReasonShuttingDown
			})
			stop()

			for _, m := range mineB {
				var slots []time.Time
				for _, o := range observations(t, db, m) {
					if o.Reason == monitor.ReasonShuttingDown {
						continue // in flight when the engine stopped
					}
					if o.Result != monitor.ResultUp {
						t.Fatalf("workspace B: %s observation of %s: %q", o.Result, m.ID, o.Reason)
					}
					slots = append(slots, o.Due)
				}
				if len(slots) < 4 {
					t.Fatalf("workspace B: %d checks of %s in 5 intervals", len(slots), m.ID)
				}
				for i := 1; i < len(slots); i++ {
					if gap := slots[i-1].Sub(slots[i]); gap != interval {
						t.Fatalf("workspace B: slots %v and %v of %s are %v apart; one was lost", slots[i], slots[i-1], m.ID, gap)
					}
				}
				hist, err := db.ListStateChanges(ctx, wsB, m.ID, time.Time{}, 10)
				check(t, err)
				if len(hist) != 1 || hist[0].To != monitor.StateUp {
					t.Fatalf("workspace B: state history of %s: %+v, want PENDING→UP only", m.ID, hist)
				}
			}
			for _, m := range mineA {
				obs := observations(t, db, m)
				if len(obs) < 4 {
					t.Fatalf("workspace A: %d checks of %s stored in 5 intervals", len(obs), m.ID)
				}
				for _, o := range obs {
					if o.Reason == monitor.ReasonShuttingDown {
						continue
					}
					if o.Result != monitor.ResultDown || !clean.Valid(o.Reason) || !strings.Contains(o.Reason, "\uFFFD\uFFFD") {
						t.Fatalf("workspace A: observation of %s stored as %s %q, want down with the answer cleaned", m.ID, o.Result, o.Reason)
					}
				}
				if s := getMonitor(t, db, m).State; s != monitor.StateDown {
					t.Fatalf("workspace A: %s is %s, want DOWN", m.ID, s)
				}
			}
			for _, name := range []string{"tocsin_observation_write_errors_total", "tocsin_observations_refused_total", "tocsin_observations_dropped_total"} {
				if got := metric(t, reg, name); got != 0 {
					t.Fatalf("%s = %v, want 0", name, got)
				}
			}
		})
	}
}
