// Package checks measures the check engine: HTTP monitors made through
// the API and checked on schedule by `tocsin serve`, next to a bare loop
// doing the same GETs on the same slots with no database;
// docs/benchmarks.md ("Check engine") tells the method.
package checks

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/monitor"
)

type config struct {
	monitors, timeout, concurrency int
	interval, grace                time.Duration
	bare                           bool
}

// Flags registers the area's flags and returns its run.
func Flags(fs *flag.FlagSet) session.Run {
	var c config
	var bareLoop bool
	fs.IntVar(&c.monitors, "monitors", 10000, "HTTP monitors of the local target")
	fs.DurationVar(&c.interval, "interval", 30*time.Second, "every monitor's check interval (whole seconds, at least 10s)")
	fs.DurationVar(&c.grace, "grace", 5*time.Second, "time after the window for checks due in it to finish and be stored")
	fs.IntVar(&c.timeout, "timeout", 10, "each check's timeout in seconds (the monitors' timeoutSeconds)")
	fs.IntVar(&c.concurrency, "concurrency", 512, "checks (tocsin serve --check-concurrency) or bare GETs in flight at most")
	fs.BoolVar(&c.bare, "bare", true, "run the bare loop first, as the baseline")
	fs.BoolVar(&bareLoop, "bare-loop", false, "internal: run the bare loop")
	return func(ctx context.Context, e session.Env) error {
		switch {
		case bareLoop:
			return runBare(ctx, c, e.Stdin, e.Stdout)
		case c.interval < 10*time.Second || c.interval%time.Second != 0:
			return errors.New("-interval must be whole seconds, at least 10s")
		case e.Duration <= 0 || c.grace < 0:
			return errors.New("-duration must be positive and -grace not negative")
		}
		if err := session.AtLeast1("-monitors, -concurrency and -timeout", c.monitors, c.concurrency, c.timeout); err != nil {
			return err
		}
		if e.Warmup <= 0 {
			e.Warmup = c.interval
		}
		title := fmt.Sprintf("Check engine: %d HTTP monitors every %s", c.monitors, c.interval)
		return session.Measure(ctx, "checks", e, c.bare, title, func(s *session.Session) session.Bench { return &bench{Session: s, c: c} })
	}
}

type bench struct {
	*session.Session
	c       config
	base    string // the target's URL
	results []*result
}

// monitorURL is one monitor's id (which sets its slots) and URL.
type monitorURL struct{ ID, URL string }

// result is one measured run: the bare loop or tocsin serve on one engine.
type result struct {
	Name   string // bare, sqlite, postgres
	Window *window
	CPU    session.Share
	Peak   int64 // the process's peak RSS, bytes
}

func (b *bench) Run(ctx context.Context) error {
	// About 100 bytes, like a small health endpoint.
	target, err := b.BareChild(ctx, "target", http.Header{"Content-Type": {"application/json"}},
		[]byte(`{"status":"ok","service":"bench-target","version":"1.0.0","checks":{"db":"ok","cache":"ok"}}`+"\n"))
	if err != nil {
		return err
	}
	b.base = target.Base
	if b.c.bare {
		if err := b.runBare(ctx); err != nil {
			return fmt.Errorf("bare loop: %w", err)
		}
	}
	for _, e := range b.Engines {
		if err := b.runEngine(ctx, e); err != nil {
			return fmt.Errorf("%s: %w", e, err)
		}
	}
	return nil
}

// runEngine makes the monitors through the API of `tocsin serve` on a
// fresh database, lets it warm up, and measures it.
func (b *bench) runEngine(ctx context.Context, e string) error {
	dbURL, _, err := b.FreshDB(ctx, e)
	if err != nil {
		return err
	}
	srv, err := b.Serve(ctx, e, dbURL, "--check-concurrency", strconv.Itoa(b.c.concurrency), "--rate-limit", "1000000")
	if err != nil {
		return err
	}
	api, err := b.OwnerAPI(ctx, srv, dbURL, "--monitors", b.c.monitors, "--min-interval", b.c.interval.String())
	if err != nil {
		return err
	}
	b.Logf("%s: creating %d monitors", e, b.c.monitors)
	targets := make([]monitorURL, b.c.monitors)
	err = seed.Many(ctx, b.c.monitors, b.Logf, func(i int) error {
		u := fmt.Sprintf("%s/m/%d", b.base, i)
		var m struct{ ID string }
		err := api.Post(ctx, "/monitors", map[string]any{"type": "http", "name": fmt.Sprintf("bench %d", i),
			"intervalSeconds": int(b.c.interval / time.Second), "config": map[string]any{"url": u, "timeoutSeconds": b.c.timeout}}, &m)
		targets[i] = monitorURL{m.ID, u}
		return err
	})
	if err != nil {
		return err
	}
	r := &result{Name: e}
	if err := b.measure(ctx, r, srv, dbURL, time.Now().Add(b.Warmup)); err != nil {
		return err
	}
	srv.Stop(time.Minute)
	db, err := seed.OpenRaw(dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	r.Window, err = analyze(actx, db, targets, b.c.interval, r.Window.From, r.Window.To)
	b.results = append(b.results, r)
	return err
}

// runBare measures the bare loop over made-up ids: a slot's phase is a
// hash of its id, so they spread the slots as the monitors' do.
func (b *bench) runBare(ctx context.Context) error {
	var targets []monitorURL
	for i := range b.c.monitors {
		targets = append(targets, monitorURL{fmt.Sprintf("mon_bare%020d", i), fmt.Sprintf("%s/m/%d", b.base, i)})
	}
	from := time.Now().Add(b.Warmup)
	ch, err := b.Child(ctx, "bare", "ready", bareJob{targets, from, from.Add(b.Duration)}, "-bare-loop",
		"-interval", b.c.interval.String(), "-concurrency", strconv.Itoa(b.c.concurrency), "-timeout", strconv.Itoa(b.c.timeout))
	if err != nil {
		return err
	}
	defer ch.Stop(30 * time.Second)
	r := &result{Name: "bare"}
	if err := b.measure(ctx, r, ch, "", from); err != nil {
		return err
	}
	l, err := ch.Line(time.Duration(b.c.timeout)*time.Second + time.Minute)
	if err != nil {
		return fmt.Errorf("no figures: %w (log: %s)", err, ch.Log)
	}
	b.results = append(b.results, r)
	return json.Unmarshal([]byte(l), &r.Window)
}

// measure waits for from, the warm-up over, measures p's window of
// -duration, and waits the grace time for the window's last checks.
func (b *bench) measure(ctx context.Context, r *result, p *session.Process, dbURL string, from time.Time) error {
	b.Logf("%s: warm-up until %s, then measuring for %s", r.Name, from.Format(time.TimeOnly), b.Duration)
	if err := session.Sleep(ctx, time.Until(from)); err != nil {
		return err
	}
	r.Window = &window{From: time.Now()}
	r.CPU = b.Window(ctx, p.Pid(), dbURL, func() { _ = session.Sleep(ctx, b.Duration) })
	r.Window.To = time.Now()
	r.Peak = session.PeakRSS(p.Pid())
	return session.Sleep(ctx, b.c.grace)
}

// cpuPerCheck is the process's CPU time, PostgreSQL's included, per check
// started in the window (the engine's stored observations, missed starts
// among them; the bare loop's GETs).
func cpuPerCheck(r *result) (total, own time.Duration) {
	n := time.Duration(max(r.Window.Started, 1))
	return (r.CPU.ServerTime + r.CPU.PostgresTime) / n, r.CPU.ServerTime / n
}

func (b *bench) Report(w *session.Report) {
	w.Printf("Load: %.0f checks/s. Each run: %s warm-up, %s measured, %s grace for the window's last checks; at most %d checks in flight, timeout %d s.\n",
		float64(b.c.monitors)/b.c.interval.Seconds(), b.Warmup, b.Duration, b.c.grace, b.c.concurrency, b.c.timeout)
	var bare time.Duration
	if r := b.results[0]; r.Name == "bare" && r.Window.Started > 0 {
		bare, _ = cpuPerCheck(r)
	}
	w.Table("run", "due / done:", "missing:", "duplicates:", "lag p50:", "lag p99:", "lag max:", "CPU per check:", "vs bare:",
		"peak RSS (per monitor):", "other processes:")
	for _, r := range b.results {
		x := r.Window
		total, own := cpuPerCheck(r)
		cpu, ratio := session.Dur(total), "–"
		if r.Name == "postgres" {
			cpu = fmt.Sprintf("%s (%s + %s in PostgreSQL)", cpu, session.Dur(own), session.Dur(total-own))
		}
		if bare > 0 {
			ratio = fmt.Sprintf("**%.2f**", float64(total)/float64(bare))
		}
		w.Printf("| %s | %d / %d | %d | %d | %s | %s | %s | %s | %s | %s (%.1f KiB) | %.0f%% |\n",
			r.Name, x.Due, x.Done, x.Missing, x.Duplicates, session.Dur(x.Lag.P50), session.Dur(x.Lag.P99), session.Dur(x.Lag.Max),
			cpu, ratio, session.MiB(r.Peak, 1), float64(r.Peak)/float64(b.c.monitors)/(1<<10), r.CPU.Other)
	}
	w.Printf("\nDue against done and the lag come from the stored observations (the bare loop's from its own GETs); CPU per check is the process's CPU time (and the benchmark database's PostgreSQL processes') over the checks started in the window; other processes: the machine's share used by everything else, above 10%% the run was disturbed.\n\n## Verdicts\n\n")
	for _, r := range b.results {
		if r.Name == "bare" {
			continue
		}
		x := r.Window
		total, _ := cpuPerCheck(r)
		w.Printf("- **%s**: none missed: %s (%d due, %d without an observation, %d given up as missed starts, %d duplicates); "+
			"lag p99 < 1 s: %s (%s); CPU per check < 1 ms: %s (%s).\n", r.Name,
			session.Verdict(x.Missing+x.MissedStart == 0 && x.Duplicates == 0), x.Due, x.Missing, x.MissedStart, x.Duplicates,
			session.Verdict(x.Lag.N > 0 && x.Lag.P99 < time.Second), session.Dur(x.Lag.P99),
			session.Verdict(total < time.Millisecond), session.Dur(total))
	}
}

// bareJob is what the bare loop does: the targets' GETs, and the window
// it reports on.
type bareJob struct {
	Targets  []monitorURL
	From, To time.Time
}

// runBare is the -bare-loop child: the same GETs of the same URLs on the
// same slots as the engine's checks, at most -concurrency in flight and a
// new connection each, the body read as the probe reads it; but no
// database. It reads its job as a line of JSON, prints "ready", and once
// the GETs due before the window's end are done, prints its figures and
// waits for its standard input to close.
func runBare(ctx context.Context, c config, stdin io.Reader, stdout io.Writer) error {
	var job bareJob
	if err := json.NewDecoder(stdin).Decode(&job); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "ready")
	type entry struct {
		url   string
		phase time.Duration
	}
	var entries []entry
	for _, t := range job.Targets {
		entries = append(entries, entry{t.URL, monitor.Phase(t.ID, c.interval)})
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.phase, b.phase) })
	client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{KeepAlive: -1}).DialContext,
		DisableKeepAlives: true, MaxResponseHeaderBytes: 64 << 10}}
	var (
		mu      sync.Mutex
		w       = window{From: job.From, To: job.To}
		lagList []time.Duration
		gets    sync.WaitGroup
		sem     = make(chan struct{}, c.concurrency)
	)
	in := func(t time.Time) bool { return !t.Before(job.From) && t.Before(job.To) }
	get := func(url string, due time.Time) {
		defer func() { <-sem }()
		start := time.Now()
		gctx, cancel := context.WithTimeout(ctx, time.Duration(c.timeout)*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(gctx, http.MethodGet, url, nil)
		if resp, err := client.Do(req); err == nil {
			_, _ = io.ReadAll(io.LimitReader(resp.Body, monitor.MaxAssertedBody+1))
			resp.Body.Close()
		}
		mu.Lock()
		defer mu.Unlock()
		if in(start) {
			w.Started++
		}
		if in(due) {
			w.Done++
			lagList = append(lagList, start.Sub(due))
		}
	}
	// The slots in time order, each GET when due, until the window ends.
	iv := c.interval
	base := time.Unix(0, time.Now().UnixNano()/int64(iv)*int64(iv))
	i, _ := slices.BinarySearchFunc(entries, time.Since(base), func(e entry, d time.Duration) int { return cmp.Compare(e.phase, d) })
	if i == len(entries) {
		i, base = 0, base.Add(iv)
	}
	for due := base.Add(entries[i].phase); due.Before(job.To); due = base.Add(entries[i].phase) {
		if err := session.Sleep(ctx, time.Until(due)); err != nil {
			return err
		}
		sem <- struct{}{}
		url := entries[i].url
		gets.Go(func() { get(url, due) })
		if i++; i == len(entries) {
			i, base = 0, base.Add(iv)
		}
	}
	gets.Wait()
	for _, t := range job.Targets {
		for s := monitor.NextSlot(t.ID, iv, job.From.Add(-time.Nanosecond)); s.Before(job.To); s = s.Add(iv) {
			w.Due++
		}
	}
	w.Missing, w.Lag = max(w.Due-w.Done, 0), lagsOf(lagList)
	if err := json.NewEncoder(stdout).Encode(w); err != nil {
		return err
	}
	_, err := io.Copy(io.Discard, stdin) // alive, its CPU time and memory read, until the parent is done
	return err
}
