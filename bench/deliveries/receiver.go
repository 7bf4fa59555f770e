// The webhook receiver, the -receive child: what docs/webhooks.md tells
// users to write. POST /hook/{channel} verifies the signature with that
// channel's secret, handles each delivery id once and answers 204; GET
// /stats tells what it has handled since POST /reset gave it the
// channels' secrets (JSON, never on a command line) and zeroed its counts.

package deliveries

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tocsin/tocsin/bench/internal/seed"
	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
)

// stats is what the receiver has handled since its last reset.
type stats struct {
	Unique        int   `json:"unique"`        // deliveries handled: signature verified, id not seen before
	Duplicates    int   `json:"duplicates"`    // verified requests of an id already handled
	BadSignatures int   `json:"badSignatures"` // answered 401
	Refused       int   `json:"refused"`       // unknown channel, unreadable body
	First         int64 `json:"first"`         // unix ns of the first unique arrival; 0: none
	// States counts the unique monitor.state_changed deliveries by the
	// state they went to; Down lists those to DOWN.
	States map[string]int `json:"states"`
	Down   []downArrival  `json:"down"`
}

// downArrival is one monitor.state_changed to DOWN as it arrived.
type downArrival struct {
	At      int64 `json:"at"`      // data.confirmedAt, unix ns: the confirming check's time
	Arrived int64 `json:"arrived"` // unix ns, when its request reached the handler
}

type receiver struct {
	mu      sync.Mutex
	secrets []string
	seen    map[string]bool
	s       stats
}

func serveReceiver(ctx context.Context, e session.Env) error {
	rc := &receiver{seen: map[string]bool{}, s: stats{States: map[string]int{}}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hook/{channel}", rc.hook)
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, r *http.Request) {
		var secrets []string
		if err := json.NewDecoder(r.Body).Decode(&secrets); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		rc.secrets, rc.seen, rc.s = secrets, map[string]bool{}, stats{States: map[string]int{}}
		rc.mu.Unlock()
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		_ = json.NewEncoder(w).Encode(rc.s)
	})
	return session.ServeChild(ctx, mux, e.Stdin, e.Stdout)
}

func (rc *receiver) hook(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	ch, cerr := strconv.Atoi(r.PathValue("channel"))
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var sc struct { // what the receiver reads of a monitor.state_changed
		Data struct {
			To          string    `json:"to"`
			ConfirmedAt time.Time `json:"confirmedAt"` // the confirming check (data.at is the first failed one)
		} `json:"data"`
	}
	switch {
	case err != nil || cerr != nil || ch < 0 || ch >= len(rc.secrets):
		rc.s.Refused++
		http.Error(w, "unknown channel", http.StatusNotFound)
		return
	case notify.Verify(r.Header.Get(notify.HeaderSignature), body, rc.secrets[ch], arrived, notify.DefaultTolerance) != nil:
		rc.s.BadSignatures++
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	case r.Header.Get(notify.HeaderEvent) == incident.MonitorStateChanged && json.Unmarshal(body, &sc) != nil:
		rc.s.Refused++
		http.Error(w, "not JSON", http.StatusBadRequest)
		return
	}
	id := r.Header.Get(notify.HeaderDelivery)
	if rc.seen[id] {
		rc.s.Duplicates++
	} else {
		rc.seen[id] = true
		rc.s.Unique++
		if rc.s.First == 0 {
			rc.s.First = arrived.UnixNano()
		}
		if sc.Data.To != "" {
			rc.s.States[sc.Data.To]++
		}
		if sc.Data.To == string(monitor.StateDown) {
			rc.s.Down = append(rc.s.Down, downArrival{At: sc.Data.ConfirmedAt.UnixNano(), Arrived: arrived.UnixNano()})
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// bareSender sends signed webhook bodies as the notifier renders them: a
// fresh delivery id, the HMAC signature, the POST over keep-alive
// connections.
type bareSender struct {
	urls     []string // channel i's hook
	secrets  []string
	prefixes [][]byte
}

// newBareSender makes the channels' bodies: for each, an incident.opened
// event as Tocsin stores it for a seeded manual incident, without its
// closing brace: each request adds its deliveryId, as Tocsin's webhook
// rendering does.
func newBareSender(channels int, hook func(int) string) *bareSender {
	s := &bareSender{}
	for i := range channels {
		now := time.Now().UTC().Truncate(time.Microsecond)
		wsID := ids.New(ids.Workspace, now)
		inc := &incident.Incident{ID: ids.New(ids.Incident, now), WorkspaceID: wsID, Title: fmt.Sprintf("Bench incident %06d", i),
			Status: incident.Investigating, Origin: incident.Manual, AffectedMonitors: []string{}, StartedAt: now, CreatedAt: now, UpdatedAt: now,
			Updates: []incident.Update{{Status: incident.Investigating, Message: seed.IncidentMessage, At: now}}}
		body, _ := json.Marshal(incident.Event{ID: ids.New(ids.Event, now), Type: incident.IncidentOpened, CreatedAt: now, WorkspaceID: wsID,
			Data: incident.IncidentData{Incident: inc}}) // these types always marshal
		s.urls, s.secrets = append(s.urls, hook(i)), append(s.secrets, notify.NewSigningSecret())
		s.prefixes = append(s.prefixes, bytes.TrimSuffix(body, []byte("}")))
	}
	return s
}

// send makes n deliveries over the channels in turn, at most concurrency
// in flight.
func (s *bareSender) send(ctx context.Context, concurrency, n int) {
	tr := session.Transport(concurrency)
	defer tr.CloseIdleConnections()
	var next atomic.Int64
	session.Closed(ctx, tr, concurrency, 24*time.Hour, func(int, int) *http.Request {
		i := int(next.Add(1) - 1)
		if i >= n {
			return nil
		}
		ch, now := i%len(s.urls), time.Now()
		id := ids.New(ids.Delivery, now)
		body := append(append(append(slices.Clip(s.prefixes[ch]), `,"deliveryId":"`...), id...), `"}`...)
		req, _ := http.NewRequest(http.MethodPost, s.urls[ch], bytes.NewReader(body))
		h := req.Header
		h.Set("Content-Type", "application/json")
		h.Set("User-Agent", notify.WebhookUserAgent)
		h.Set(notify.HeaderSignature, notify.Sign(now, body, s.secrets[ch:ch+1]))
		h.Set(notify.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
		h.Set(notify.HeaderDelivery, id)
		h.Set(notify.HeaderEvent, incident.IncidentOpened)
		return req
	}, nil)
}

// statuses counts the deliveries the server stored by status.
func statuses(ctx context.Context, db *sql.DB) (map[notify.Status]int, error) {
	rows, err := db.QueryContext(ctx, `SELECT status, COUNT(*) FROM deliveries GROUP BY status`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[notify.Status]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[notify.Status(s)] = n
	}
	return out, rows.Err()
}
