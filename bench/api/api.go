// Package api measures authenticated API reads against a bare handler
// answering a monitor-sized body, in closed loops of keep-alive clients;
// docs/benchmarks.md ("API") tells the method.
package api

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/tocsin/tocsin/bench/internal/session"
)

// target is the reads' target: at least this much of bare's rate.
const target = 0.25

type config struct {
	concurrency, keys, rateLimit int
	bare                         bool
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var c config
	fs.IntVar(&c.concurrency, "concurrency", 32, "concurrent keep-alive clients (closed loop)")
	fs.BoolVar(&c.bare, "bare", true, "measure the bare handler too, as the baseline")
	fs.IntVar(&c.rateLimit, "rate-limit", 1_000_000, "tocsin --rate-limit (requests per minute per API key); high so the limiter never refuses")
	fs.IntVar(&c.keys, "keys", 32, "API keys the clients share out (client w uses key w mod keys); 1: every client on one key")
	return func(ctx context.Context, e session.Env) error {
		if err := session.AtLeast1("-rounds, -concurrency and -keys", e.Rounds, c.concurrency, c.keys); err != nil {
			return err
		}
		return session.Measure(ctx, "api", e, c.bare, "API", func(s *session.Session) session.Bench {
			return &bench{Session: s, c: c, tr: session.Transport(c.concurrency)}
		})
	}
}

type bench struct {
	*session.Session
	c       config
	tr      *http.Transport
	targets []*tgt
}

// tgt is one row of the table: a server and the GET each client sends.
type tgt struct {
	name   string
	srv    *session.Process
	dbURL  string
	reqs   []*http.Request // by client
	rounds []session.Outcome
}

func (b *bench) Run(ctx context.Context) error {
	defer b.tr.CloseIdleConnections()
	if b.c.bare {
		p, err := b.BareChild(ctx, "bare", http.Header{"Content-Type": {"application/json"}}, bareBody)
		if err != nil {
			return err
		}
		b.targets = append(b.targets, b.reads("bare", p, "", p.Base+"/api/v1/monitors/mon_01M7ZZ0000000000000000000", []string{"tsk_bare"}))
	}
	for _, e := range b.Engines {
		if err := b.engine(ctx, e); err != nil {
			return fmt.Errorf("%s: %w", e, err)
		}
	}
	return b.Rotate(len(b.targets), func(r, i int) error {
		t := b.targets[i]
		_, o := b.Phase(ctx, t.srv.Pid(), t.dbURL, func(d time.Duration) session.Outcome {
			return session.Closed(ctx, b.tr, b.c.concurrency, d, func(w, _ int) *http.Request { return t.reqs[w] }, nil)
		})
		t.rounds = append(t.rounds, o)
		b.Logf("%-14s round %d: %8.0f req/s  p50 %-9s p99 %-9s failed %d  CPU%%: busy %.0f, server %.0f, postgres %.0f, others %.0f",
			t.name, r+1, o.Rate(), session.Dur(o.P(0.5)), session.Dur(o.P(0.99)), o.Failures(), o.CPU.Busy, o.CPU.Server, o.CPU.Postgres, o.CPU.Other)
		return ctx.Err()
	})
}

// engine serves a fresh database of e, and makes keys for the owner
// `tocsin serve` made and one monitor to read, through the API.
func (b *bench) engine(ctx context.Context, e string) error {
	dbURL, _, err := b.FreshDB(ctx, e)
	if err != nil {
		return err
	}
	srv, err := b.Serve(ctx, "tocsin-"+e, dbURL, "--rate-limit", fmt.Sprint(b.c.rateLimit))
	if err != nil {
		return err
	}
	var keys []string
	for i := range b.c.keys {
		key, err := b.Tocsin(ctx, dbURL, "key", "create", "--email", "owner@localhost", "--workspace", "default",
			"--scope", "monitors:read", "--scope", "monitors:write", "--name", fmt.Sprintf("bench-get-%d", i))
		if err != nil {
			return err
		}
		keys = append(keys, key)
	}
	var m struct{ ID string }
	err = session.API(srv.Base, keys[0]).Post(ctx, "/monitors", map[string]any{"type": "http", "name": "bench read target",
		"config": map[string]string{"url": "http://127.0.0.1:9/health"}}, &m)
	b.targets = append(b.targets, b.reads(e+"-get", srv, dbURL, srv.Base+"/api/v1/monitors/"+m.ID, keys))
	return err
}

// reads is a target whose client w GETs url with key w mod len(keys), as
// many API clients would, each well within its own rate limit.
func (b *bench) reads(name string, srv *session.Process, dbURL, url string, keys []string) *tgt {
	t := &tgt{name: name, srv: srv, dbURL: dbURL}
	for w := range b.c.concurrency {
		req := session.Get(url)
		req.Header.Set("Authorization", "Bearer "+keys[w%len(keys)])
		req.Header.Set("Accept", "application/json")
		t.reqs = append(t.reqs, req)
	}
	return t
}

// bareBody is the bare handler's answer: about the size and shape of a
// monitor, so the baseline moves as many bytes as a GET of one.
var bareBody = []byte(`{"id":"mon_01M7ZZ0000000000000000000","type":"http","name":"bare baseline",` +
	`"config":{"url":"http://127.0.0.1:9/health","method":"GET","timeoutSeconds":10,"followRedirects":true,` +
	`"expectedStatusCodes":["200-399"],"headers":{"Accept":"application/json"}},"intervalSeconds":60,` +
	`"state":"PENDING","stateSince":"2026-01-01T00:00:00.000000Z","paused":false,` +
	`"createdAt":"2026-01-01T00:00:00.000000Z","updatedAt":"2026-01-01T00:00:00.000000Z",` +
	`"padding":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}` + "\n")

func (b *bench) Report(w *session.Report) {
	w.Printf("Load: %d keep-alive clients, closed loop, %s per round after a %s warm-up, %d rounds interleaved; tocsin --rate-limit %d.\n",
		b.c.concurrency, b.Duration, b.Warmup, b.Rounds, b.c.rateLimit)
	var bare []session.Outcome
	if b.targets[0].name == "bare" {
		bare = b.targets[0].rounds
	}
	w.Table("target", "median req/s:", "req/s per round", "p50:", "p99:", "vs bare, paired by round:", "failed",
		"server CPU per request:", "PostgreSQL CPU per request:", "other processes:")
	var verdicts []string
	for _, t := range b.targets {
		all := session.Pool(t.rounds, 0)
		var srv, pg, other []float64
		for _, o := range t.rounds {
			n := time.Duration(max(o.OK+o.Failures(), 1))
			srv, pg, other = append(srv, float64(o.CPU.ServerTime/n)), append(pg, float64(o.CPU.PostgresTime/n)), append(other, o.CPU.Other)
		}
		ratio := "–"
		// Round i of every target runs in the same pass as bare's; the
		// median of the ratios resists the machine's drift.
		if ratios := session.Ratios(t.rounds, bare); len(ratios) > 0 {
			r := session.Median(ratios)
			if ratio = fmt.Sprintf("**%.2f**", r); t.name != "bare" {
				verdicts = append(verdicts, fmt.Sprintf("- %s at least %.2f of bare: %s (%.2f)", t.name, target, session.Verdict(r >= target), r))
			}
		}
		rates := session.Rates(t.rounds)
		w.Printf("| %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %.0f%% |\n", t.name, session.Median(rates), session.Join(rates, 0),
			session.Dur(all.P(0.5)), session.Dur(all.P(0.99)), ratio, all.FailedString(), session.MedianDur(srv), session.MedianDur(pg), session.Median(other))
	}
	w.Printf("\nCPU per request: the process's CPU time over a round's requests (median of the rounds). Other processes: the machine's share used by everything else; above 10%% the round was disturbed: run again.\n")
	w.Printf("\n## Verdicts\n\n%s\n", strings.Join(verdicts, "\n"))
}
