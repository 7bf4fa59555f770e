package metrics

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/internal/app"
)

// query is one GET whose answers are timed.
type query struct {
	name, path string
	times      []time.Duration // measured answers, in order
	bytes      int             // the last answer's size
	gzipped    int             // the last answer's size as sent, gzipped
	checks     int64           // checks counted by the last answer (its subjects' total)
}

func (q *query) percentile(p float64) time.Duration {
	return figure.Percentile(slices.Sorted(slices.Values(q.times)), p)
}

func newQueries(fx fixture) []*query {
	year := "/api/v1/monitors/" + fx.yearID + "/metrics?"
	dense := "/api/v1/monitors/" + fx.denseID + "/metrics?"
	return []*query{
		{name: "year monitor, 24 h", path: year + "window=24h"},
		{name: "year monitor, 30 d", path: year + "window=30d"},
		{name: "year monitor, 365 d", path: year + "window=365d"},
		{name: "year monitor, 90 days by day", path: year + "window=90d&resolution=day"},
		{name: "60 s monitor, 24 h", path: dense + "window=24h"},
		{name: "60 s monitor, 30 d", path: dense + "window=30d"},
		{name: "60 s monitor, 90 days by day", path: dense + "window=90d&resolution=day"},
		{name: "listing, 100 monitors, 30 d", path: "/api/v1/metrics?window=30d&limit=100&kind=monitor"},
		// The heaviest the budget allows: 4 monitors a page (8,644 points).
		{name: "heaviest allowed: listing by hour over 90 d", path: "/api/v1/metrics?window=90d&resolution=hour&limit=100&kind=monitor"},
	}
}

// waitRollups waits until the server's own rollup loop has nothing to do:
// the hourly rollup has reached the last settled hour and the daily one
// the day it ends in, twice in a row a second apart.
func (b *bench) waitRollups(ctx context.Context, raw *rawDB) error {
	deadline := time.Now().Add(5 * time.Minute)
	steady := 0
	for time.Now().Before(deadline) {
		p, err := raw.progress(ctx)
		if err != nil {
			return err
		}
		hour := time.Now().Add(-app.RollupSettle).Truncate(time.Hour)
		if !p[hourRollup].Before(hour) && !p["observations/day"].Before(p[hourRollup].Truncate(day)) {
			if steady++; steady == 2 {
				return nil
			}
		} else {
			steady = 0
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return fmt.Errorf("the server's rollups did not catch up within 5 minutes")
}

// measure sends each query warmup times, then reps times, the queries
// taking turns, one request at a time over one keep-alive connection, and
// returns the machine's CPU use over the measured part.
func (b *bench) measure(ctx context.Context, base, key string, qs []*query, serverPID int, raw *rawDB) (load, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: time.Minute}
	get := func(q *query) (time.Duration, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+q.path, nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept-Encoding", "gzip") // as a client library asks; measured as sent
		begin := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(begin)
		if err != nil {
			return 0, err
		}
		if resp.StatusCode != http.StatusOK {
			return 0, fmt.Errorf("%s: %s: %.300s", q.path, resp.Status, body)
		}
		q.gzipped = len(body)
		if resp.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				return 0, err
			}
			if body, err = io.ReadAll(zr); err != nil {
				return 0, err
			}
		}
		q.bytes = len(body)
		q.checks = checksIn(body)
		return took, nil
	}
	for _, q := range qs {
		for range b.c.warmup {
			if _, err := get(q); err != nil {
				return load{}, err
			}
		}
	}
	pg, err := raw.pgProcesses(ctx)
	if err != nil {
		return load{}, err
	}
	before := host.TakeSample()
	for range b.c.reps {
		for _, q := range qs {
			d, err := get(q)
			if err != nil {
				return load{}, err
			}
			q.times = append(q.times, d)
		}
	}
	return cpuLoad(before, host.TakeSample(), serverPID, pg), nil
}

// checksIn is the total of the checks an answer counts: a subject's, or
// every subject's of a listing.
func checksIn(body []byte) int64 {
	type figures struct {
		Checks *struct {
			Total int64 `json:"total"`
		} `json:"checks"`
	}
	var v struct {
		figures
		Data []figures `json:"data"`
	}
	if json.Unmarshal(body, &v) != nil {
		return -1
	}
	var n int64
	if v.Checks != nil {
		n += v.Checks.Total
	}
	for _, d := range v.Data {
		if d.Checks != nil {
			n += d.Checks.Total
		}
	}
	return n
}

// load is the machine's CPU use while the queries were measured, in
// percent of all CPUs.
type load struct {
	busy, server, postgres, self, other, steal float64
}

func cpuLoad(a, b host.Sample, serverPID int, pg map[int]bool) load {
	ticks, busy, steal, irq := a.Window(b)
	if ticks == 0 {
		return load{}
	}
	var server, pgTicks, mine uint64
	self := selfPID()
	a.Each(b, func(pid int, own uint64) {
		switch {
		case pid == serverPID:
			server += own
		case pid == self:
			mine += own
		case pg[pid]:
			pgTicks += own
		}
	})
	pct := func(x uint64) float64 { return 100 * float64(x) / ticks }
	l := load{busy: busy, steal: steal, server: pct(server), postgres: pct(pgTicks), self: pct(mine)}
	l.other = max(busy-l.server-l.postgres-l.self-irq, 0)
	return l
}
