package deliveries

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/netguard"
	"github.com/tocsin/tocsin/internal/notify"
)

// throughput is one target's delivery of -deliveries events in one round.
type throughput struct {
	target   string // bare, sqlite, postgres
	round    int
	n        int // deliveries to make
	channels int
	setup    time.Duration // engines: owners, workspaces and channels made in
	created  time.Duration // engines: the incidents written in
	// elapsed runs from the notifier's (or the bare sender's) start until
	// the receiver had handled every delivery and, on an engine, the store
	// held none pending.
	elapsed time.Duration
	recv    stats
	store   map[notify.Status]int // engines: deliveries by status at the end
	cpu     cpuShare
	failed  map[string]int // bare: answers other than 204 and transport errors, by kind
}

// rate is deliveries handled by the receiver per second.
func (t *throughput) rate() float64 {
	if t.elapsed <= 0 {
		return 0
	}
	return float64(t.recv.Unique) / t.elapsed.Seconds()
}

// tocsinRound measures `tocsin serve`'s notifier on a fresh database of
// engine: the incidents are written first, then the server starts and the
// clock runs from its first attempt until every delivery has arrived and
// is stored as succeeded.
func (b *bench) tocsinRound(ctx context.Context, engine string, round int) (_ *throughput, err error) {
	t := &throughput{target: engine, round: round, n: b.c.deliveries, channels: b.c.channels}
	dbURL, drop, err := b.freshDatabase(ctx, engine)
	if err != nil {
		return nil, err
	}
	defer drop()
	if err := b.writeIncidents(ctx, t, dbURL); err != nil {
		return nil, err
	}
	raw, err := openRaw(engine, dbURL)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	if st, err := raw.statuses(ctx); err != nil {
		return nil, err
	} else if st[notify.Pending] != t.n || len(st) != 1 {
		return nil, fmt.Errorf("after writing %d incidents the deliveries are %v, not %d pending", t.n, st, t.n)
	}
	b.Logf("round %d, %s: %d incidents written in %s; starting tocsin serve", round, engine, t.n, figure.Dur(t.created))

	before := sampleCPU()
	launched := time.Now()
	srv, err := b.serve(ctx, fmt.Sprintf("tocsin-%s-round%d", engine, round), dbURL)
	if err != nil {
		return nil, err
	}
	defer srv.Stop(30 * time.Second)
	end, werr := b.waitDelivered(ctx, launched, t.n, raw, nil)
	pg, _ := raw.pgProcesses(ctx) // while the server's backends live
	after := sampleCPU()
	srv.Stop(30 * time.Second)
	if werr != nil {
		return nil, werr
	}
	first, err := raw.firstAttempts(ctx)
	if err != nil {
		return nil, err
	}
	start := end
	for _, at := range first {
		if at.Before(start) {
			start = at
		}
	}
	t.elapsed = end.Sub(start)
	t.cpu = share(before, after, srv.Pid(), b.recv.child.Pid(), pg)
	if t.recv, err = b.recv.stats(ctx, false); err != nil {
		return nil, err
	}
	if t.store, err = raw.statuses(ctx); err != nil {
		return nil, err
	}
	return t, nil
}

// writeIncidents makes the round's owners and channels and writes its
// incidents, through the app in this process; the database is closed
// again before the server opens it.
func (b *bench) writeIncidents(ctx context.Context, t *throughput, dbURL string) error {
	db, a, err := openApp(ctx, dbURL, b.keys, app.Config{Outbound: netguard.Policy{}})
	if err != nil {
		return err
	}
	defer db.Close()
	begin := time.Now()
	ts, err := createTenants(ctx, a, b.c.channels, b.recv.hookURL, nil)
	if err != nil {
		return fmt.Errorf("creating owners and channels: %w", err)
	}
	t.setup = time.Since(begin)
	if err := b.recv.reset(ctx, secretsOf(ts)); err != nil {
		return err
	}
	b.Logf("round %d, %s: writing %d incidents over %d workspaces, no server running", t.round, t.target, t.n, len(ts))
	begin = time.Now()
	if err := createIncidents(ctx, a, ts, t.n); err != nil {
		return fmt.Errorf("creating incidents: %w", err)
	}
	t.created = time.Since(begin)
	return nil
}

// waitDelivered polls the receiver every 10 ms until it has handled n
// deliveries and, with raw, the store holds none pending and as many
// succeeded as the receiver handled (on an engine, a delivery held back
// by its channel's rate bound never arrives); or, with gaveUp, until
// gaveUp is closed and the receiver's count stands. It returns when it
// saw that.
func (b *bench) waitDelivered(ctx context.Context, start time.Time, n int, raw *rawDB, gaveUp <-chan struct{}) (time.Time, error) {
	var (
		lastStore time.Time
		s         stats
		st        map[notify.Status]int
		err       error
	)
	for {
		if s, err = b.recv.stats(ctx, false); err != nil {
			return time.Time{}, err
		}
		now := time.Now()
		switch {
		case raw == nil && s.Unique >= n:
			return now, nil
		case raw == nil:
			select {
			case <-gaveUp:
				if s2, err := b.recv.stats(ctx, false); err == nil && s2.Unique == s.Unique {
					return now, nil
				}
			default:
			}
		case s.Unique >= n || now.Sub(lastStore) >= time.Second:
			lastStore = now
			if st, err = raw.statuses(ctx); err != nil {
				return time.Time{}, err
			}
			if st[notify.Pending] == 0 && s.Unique >= st[notify.Succeeded] {
				return time.Now(), nil
			}
		}
		if now.Sub(start) > b.c.timeout {
			return time.Time{}, fmt.Errorf("not delivered within %s: the receiver has %d of %d (%d duplicates, %d bad signatures, %d refused), the store %v",
				b.c.timeout, s.Unique, n, s.Duplicates, s.BadSignatures, s.Refused, st)
		}
		if err := session.Sleep(ctx, 10*time.Millisecond); err != nil {
			return time.Time{}, err
		}
	}
}

// bareRound is the baseline: this process POSTs as many signed bodies of
// the same size to the same receiver, over as many channels, with the
// same concurrency, and nothing else: no database, no leases.
func (b *bench) bareRound(ctx context.Context, round int) (*throughput, error) {
	t := &throughput{target: "bare", round: round, n: b.c.deliveries, channels: b.c.channels}
	s := &bareSender{concurrency: b.c.concurrency}
	for i := range b.c.channels {
		s.urls = append(s.urls, b.recv.hookURL(i))
		s.secrets = append(s.secrets, notify.NewSigningSecret())
		s.prefixes = append(s.prefixes, bareEvent(ids.New(ids.Workspace, time.Now()), i))
	}
	if err := b.recv.reset(ctx, s.secrets); err != nil {
		return nil, err
	}
	sent := make(chan struct{})
	before := sampleCPU()
	start := time.Now()
	go func() {
		defer close(sent)
		t.failed = s.send(ctx, t.n)
	}()
	end, werr := b.waitDelivered(ctx, start, t.n, nil, sent)
	after := sampleCPU()
	<-sent
	if werr != nil {
		return nil, werr
	}
	t.elapsed = end.Sub(start)
	t.cpu = share(before, after, os.Getpid(), b.recv.child.Pid(), nil)
	var err error
	if t.recv, err = b.recv.stats(ctx, false); err != nil {
		return nil, err
	}
	return t, nil
}

// bareEvent is an incident.opened event as Tocsin stores it for a manual
// incident of the benchmark, without its closing brace: each request
// adds its deliveryId, as Tocsin's webhook rendering does.
func bareEvent(wsID string, i int) []byte {
	now := time.Now().UTC().Truncate(time.Microsecond)
	inc := &incident.Incident{ID: ids.New(ids.Incident, now), WorkspaceID: wsID, Title: fmt.Sprintf("Bench incident %06d", i),
		Status: incident.Investigating, Origin: incident.Manual, AffectedMonitors: []string{}, StartedAt: now, CreatedAt: now, UpdatedAt: now,
		Updates: []incident.Update{{Status: incident.Investigating, Message: incidentMessage, At: now}}}
	ev := incident.Event{ID: ids.New(ids.Event, now), Type: incident.IncidentOpened, CreatedAt: now, WorkspaceID: wsID,
		Data: incident.IncidentData{Incident: inc}}
	body, _ := json.Marshal(ev) // these types always marshal
	return bytes.TrimSuffix(body, []byte("}"))
}

// bareSender sends signed webhook bodies: a fresh delivery id, the HMAC
// signature, the POST; keep-alive connections, at most concurrency in
// flight.
type bareSender struct {
	concurrency int
	urls        []string // channel i's hook
	secrets     []string
	prefixes    [][]byte
}

// send makes n deliveries over the channels in turn and returns what did
// not come back 204, by kind.
func (s *bareSender) send(ctx context.Context, n int) map[string]int {
	tr := &http.Transport{MaxIdleConnsPerHost: s.concurrency, IdleConnTimeout: 90 * time.Second}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: notify.AttemptTimeout}
	var (
		next   atomic.Int64
		mu     sync.Mutex
		failed = map[string]int{}
		wg     sync.WaitGroup
	)
	for range s.concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if kind := s.deliver(ctx, client, i%len(s.urls)); kind != "" {
					mu.Lock()
					failed[kind]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return failed
}

// deliver sends one delivery to channel ch; "" when it was answered 204.
func (s *bareSender) deliver(ctx context.Context, client *http.Client, ch int) string {
	now := time.Now()
	id := ids.New(ids.Delivery, now)
	body := make([]byte, 0, len(s.prefixes[ch])+len(id)+16)
	body = append(body, s.prefixes[ch]...)
	body = append(body, `,"deliveryId":"`...)
	body = append(body, id...)
	body = append(body, `"}`...)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.urls[ch], bytes.NewReader(body))
	if err != nil {
		return err.Error()
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", notify.WebhookUserAgent)
	h.Set(notify.HeaderSignature, notify.Sign(now, body, s.secrets[ch:ch+1]))
	h.Set(notify.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(notify.HeaderDelivery, id)
	h.Set(notify.HeaderEvent, incident.IncidentOpened)
	res, err := client.Do(req)
	if err != nil {
		return "no answer"
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		return strconv.Itoa(res.StatusCode)
	}
	return ""
}
