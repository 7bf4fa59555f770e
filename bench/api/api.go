// Package api measures authenticated API reads and creates against a
// bare handler answering a monitor-sized body, in closed loops of
// keep-alive clients; docs/benchmarks.md ("API") tells the method.
package api

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tocsin/tocsin/bench/internal/session"
)

// target is the reads' target: at least this much of bare's rate.
const target = 0.25

type config struct {
	concurrency, keys, rateLimit int
	postGuess                    float64
	ops                          string
	bare                         bool
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var c config
	fs.IntVar(&c.concurrency, "concurrency", 32, "concurrent keep-alive clients (closed loop)")
	fs.StringVar(&c.ops, "ops", "get,post", "operations measured on each engine: get, post")
	fs.BoolVar(&c.bare, "bare", true, "measure the bare handler too, as the baseline")
	fs.IntVar(&c.rateLimit, "rate-limit", 1_000_000, "tocsin --rate-limit (requests per minute per API key); high so the limiter never refuses")
	fs.Float64Var(&c.postGuess, "post-rate-guess", 2500, "expected POST req/s before the first measurement; sizes the workspaces made for the monitor quota")
	fs.IntVar(&c.keys, "keys", 32, "API keys the GET clients share out (client w uses key w mod keys); 1: every client on one key")
	return func(ctx context.Context, e session.Env) error {
		if err := session.AtLeast1("-rounds, -concurrency and -keys", e.Rounds, c.concurrency, c.keys); err != nil {
			return err
		}
		return session.Measure(ctx, "api", e, len(e.Engines) == 0, "API", func(s *session.Session) session.Bench {
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

// tgt is one row of the table.
type tgt struct {
	name   string
	srv    *session.Process
	next   func(w, i int) *http.Request
	want   session.Want
	posts  *creates // POST targets only
	dbURL  string
	rate   float64 // expected req/s, for sizing the POST targets' workspaces
	rounds []session.Outcome
}

func (b *bench) Run(ctx context.Context) error {
	defer b.tr.CloseIdleConnections()
	if b.c.bare {
		p, err := b.BareChild(ctx, "bare", http.Header{"Content-Type": {"application/json"}}, bareBody)
		if err != nil {
			return err
		}
		get := reads(b.c.concurrency, p.Base+"/api/v1/monitors/mon_01M7ZZ0000000000000000000", []string{"tsk_bare"})
		b.targets = append(b.targets, &tgt{name: "bare", srv: p, next: get})
	}
	for _, e := range b.Engines {
		var srv *session.Process
		var dbURL string
		for op := range strings.SplitSeq(b.c.ops, ",") {
			if op = strings.TrimSpace(op); op != "get" && op != "post" {
				return fmt.Errorf("-ops: unknown operation %q; known: get, post", op)
			}
			if srv == nil {
				var err error
				if dbURL, _, err = b.FreshDB(ctx, e); err != nil {
					return err
				}
				if srv, err = b.Serve(ctx, "tocsin-"+e, dbURL, "--rate-limit", fmt.Sprint(b.c.rateLimit)); err != nil {
					return err
				}
			}
			t := &tgt{name: e + "-" + op, srv: srv, dbURL: dbURL, rate: b.c.postGuess}
			if op == "get" {
				id, keys, err := b.seedGet(ctx, t)
				if err != nil {
					return fmt.Errorf("%s: %w", t.name, err)
				}
				t.next = reads(b.c.concurrency, srv.Base+"/api/v1/monitors/"+id, keys)
			} else {
				t.posts = &creates{url: srv.Base + "/api/v1/monitors", current: make([]*workspace, b.c.concurrency)}
				t.next, t.want = t.posts.request, t.posts.answered
			}
			b.targets = append(b.targets, t)
		}
	}
	if len(b.targets) == 0 {
		return fmt.Errorf("no targets to run")
	}
	return b.Rotate(len(b.targets), func(r, i int) error {
		if err := b.measure(ctx, b.targets[i], r); err != nil {
			return fmt.Errorf("%s: %w", b.targets[i].name, err)
		}
		return nil
	})
}

// measure warms a target up, then records one round.
func (b *bench) measure(ctx context.Context, t *tgt, round int) error {
	if err := b.provision(ctx, t, b.Warmup+b.Duration); err != nil {
		return err
	}
	load := func(d time.Duration) session.Outcome {
		return session.Closed(ctx, b.tr, b.c.concurrency, d, t.next, t.want)
	}
	if b.Warmup > 0 {
		w := load(b.Warmup)
		if t.rate = max(t.rate, w.Rate()); t.posts != nil {
			t.rate = w.Rate() // the warm-up knows the real rate better than the guess did
		}
		if err := b.provision(ctx, t, b.Duration); err != nil {
			return err
		}
	}
	var o session.Outcome
	cpu := b.Window(ctx, t.srv.Pid(), t.dbURL, func() { o = load(b.Duration) })
	o.CPU = cpu
	if err := ctx.Err(); err != nil {
		return err
	}
	t.rounds = append(t.rounds, o)
	t.rate = max(t.rate, o.Rate())
	b.Logf("%-14s round %d: %8.0f req/s  p50 %-9s p99 %-9s failed %d  CPU%%: busy %.0f, server %.0f, postgres %.0f, others %.0f",
		t.name, round+1, o.Rate(), session.Dur(o.P(0.5)), session.Dur(o.P(0.99)), o.Failures(), o.CPU.Busy, o.CPU.Server, o.CPU.Postgres, o.CPU.Other)
	time.Sleep(500 * time.Millisecond) // let the round's background work settle
	return nil
}

// reads prepares a GET per client; client w sends key w mod len(keys),
// as many API clients would, each well within its own rate limit.
func reads(clients int, url string, keys []string) func(w, i int) *http.Request {
	reqs := make([]*http.Request, clients)
	for w := range reqs {
		reqs[w] = session.Get(url)
		reqs[w].Header.Set("Authorization", "Bearer "+keys[w%len(keys)])
		reqs[w].Header.Set("Accept", "application/json")
	}
	return func(w, _ int) *http.Request { return reqs[w] }
}

// seedGet makes keys for the owner `tocsin serve` made and one monitor
// to read, through the API.
func (b *bench) seedGet(ctx context.Context, t *tgt) (id string, keys []string, err error) {
	for i := range b.c.keys {
		key, err := b.Tocsin(ctx, t.dbURL, "key", "create", "--email", "owner@localhost", "--workspace", "default",
			"--scope", "monitors:read", "--scope", "monitors:write", "--name", fmt.Sprintf("bench-get-%d", i))
		if err != nil {
			return "", nil, err
		}
		keys = append(keys, key)
	}
	var m struct{ ID string }
	err = session.API(t.srv.Base, keys[0]).Post(ctx, "/monitors", map[string]any{"type": "http", "name": "bench read target",
		"config": map[string]string{"url": "http://127.0.0.1:9/health"}}, &m)
	return m.ID, keys, err
}

// quota is a workspace's default monitor quota; a create beyond it gets
// 402 quota_exceeded.
const quota = 1000

// provision adds workspaces, an owner and a key each (`tocsin user
// create`, `tocsin key create`), until a POST target can take a phase of
// d, generously.
func (b *bench) provision(ctx context.Context, t *tgt, d time.Duration) error {
	if t.posts == nil {
		return nil
	}
	need := int(t.rate*d.Seconds()*1.5) + 4*b.c.concurrency
	missing := (need - t.posts.capacity() + quota - 1) / quota
	if missing > 0 {
		b.Logf("%s: adding %d workspaces for %d more creates", t.name, missing, need)
	}
	for range max(missing, 0) {
		slug := fmt.Sprintf("bench-post-%d", len(t.posts.wss)+1)
		email := slug + "@localhost"
		if _, err := b.Tocsin(ctx, t.dbURL, "user", "create", "--email", email, "--workspace", slug, "--role", "owner"); err != nil {
			return err
		}
		key, err := b.Tocsin(ctx, t.dbURL, "key", "create", "--email", email, "--workspace", slug,
			"--scope", "monitors:read", "--scope", "monitors:write", "--name", "bench-post")
		if err != nil {
			return err
		}
		t.posts.wss = append(t.posts.wss, &workspace{key: key})
	}
	return nil
}

// workspace is one the POST load creates monitors in.
type workspace struct {
	key  string
	used atomic.Int64 // creates sent that succeeded or may have
}

// creates is the POST load. It fills workspaces one after the other, all
// clients in the same one at a time, like one tenant adding monitors;
// they are created paused and aimed at a closed port, so the figure is
// the create path and nothing leaves the machine. Workspaces are never
// emptied: deletes would leave PostgreSQL dead index entries that every
// later quota count walks through.
type creates struct {
	url     string
	wss     []*workspace // grows only between phases
	cursor  atomic.Int64 // the workspace being filled
	current []*workspace // by client
}

const createBody = `{"type":"http","name":"bench","paused":true,"config":{"url":"http://127.0.0.1:9/health"}}`

func (c *creates) request(w, _ int) *http.Request {
	for {
		i := c.cursor.Load()
		if i >= int64(len(c.wss)) {
			return nil
		}
		ws := c.wss[i]
		if ws.used.Add(1) > quota {
			ws.used.Add(-1)
			c.cursor.CompareAndSwap(i, i+1)
			continue
		}
		req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(createBody))
		req.Header.Set("Authorization", "Bearer "+ws.key)
		req.Header.Set("Content-Type", "application/json")
		c.current[w] = ws
		return req
	}
}

// answered gives back the slot of a create that was refused.
func (c *creates) answered(w int, resp *http.Response, _ []byte) bool {
	if resp.StatusCode != http.StatusCreated {
		c.current[w].used.Add(-1)
	}
	return resp.StatusCode == http.StatusCreated
}

// capacity is how many more creates fit in the workspaces there are.
func (c *creates) capacity() int {
	n := 0
	for _, ws := range c.wss[min(int(c.cursor.Load()), len(c.wss)):] {
		n += quota - int(ws.used.Load())
	}
	return n
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
			ratio = fmt.Sprintf("**%.2f**", r)
			if strings.HasSuffix(t.name, "-get") {
				verdicts = append(verdicts, fmt.Sprintf("- %s at least %.2f of bare: %s (%.2f)", t.name, target, session.Verdict(r >= target), r))
			}
		}
		rates := session.Rates(t.rounds)
		w.Printf("| %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %.0f%% |\n", t.name, session.Median(rates), session.Join(rates, 0),
			session.Dur(all.P(0.5)), session.Dur(all.P(0.99)), ratio, all.FailedString(), session.MedianDur(srv), session.MedianDur(pg), session.Median(other))
		if all.Exhausted {
			verdicts = append(verdicts, fmt.Sprintf("- %s ran out of workspace quota before a round's end: its rate covers a shorter run", t.name))
		}
	}
	w.Printf("\nCPU per request: the process's CPU time over a round's requests (median of the rounds). Other processes: the machine's share used by everything else; above 10%% the round was disturbed: run again.\n")
	w.Printf("\n## Verdicts\n\n%s\n", strings.Join(verdicts, "\n"))
}
