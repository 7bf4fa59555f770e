package deliveries

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
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

// The webhook receiver, the -receive child: what docs/webhooks.md tells
// users to write. POST /hook/{channel} verifies
// the signature with that channel's secret, handles each delivery id once
// and answers 204; GET /stats tells what it has handled. It listens on
// 127.0.0.1:0, prints its URL as the first line on stdout, and reads
// commands from stdin, one JSON object a line: each sets the channels'
// secrets and starts counting afresh (secrets never go on a command line).
// It stops at EOF.

// receiverCommand is one line on the receiver's stdin.
type receiverCommand struct {
	Gen     int      `json:"gen"`     // echoed in stats once applied
	Secrets []string `json:"secrets"` // channel i's signing secret
}

// stats is what the receiver has handled since its last command.
type stats struct {
	Gen           int   `json:"gen"`
	Unique        int   `json:"unique"`        // deliveries handled: signature verified, id not seen before
	Duplicates    int   `json:"duplicates"`    // verified requests of an id already handled
	BadSignatures int   `json:"badSignatures"` // answered 401
	Refused       int   `json:"refused"`       // unknown channel, unreadable body
	First         int64 `json:"first"`         // unix ns of the first unique arrival; 0: none
	// States counts the unique monitor.state_changed deliveries by the
	// state they went to.
	States map[string]int `json:"states"`
	// Down lists the state changes to DOWN (with ?down=1 only).
	Down []downArrival `json:"down,omitempty"`
}

// downArrival is one monitor.state_changed to DOWN as it arrived.
type downArrival struct {
	Delivery string `json:"delivery"`
	At       int64  `json:"at"`      // data.at, unix ns: the confirming check's time
	Arrived  int64  `json:"arrived"` // unix ns, when its request reached the handler
}

// maxHookBody bounds what the receiver reads of a delivery.
const maxHookBody = 1 << 20

type receiver struct {
	mu      sync.Mutex
	secrets []string
	seen    map[string]bool
	s       stats
}

func serveReceiver(ctx context.Context, stdin io.Reader, stdout io.Writer) error {
	rc := &receiver{seen: map[string]bool{}, s: stats{States: map[string]int{}}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hook/{channel}", rc.hook)
	mux.HandleFunc("GET /stats", rc.stats)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := session.NewServer(mux)
	cmds, w := io.Pipe()
	go func() {
		sc := bufio.NewScanner(stdin)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var cmd receiverCommand
			if json.Unmarshal(sc.Bytes(), &cmd) == nil {
				rc.reset(cmd)
			}
		}
		w.Close() // EOF: the parent is done
	}()
	return session.ServeUntilEOF(ctx, srv, ln, "http://"+ln.Addr().String(), cmds, stdout)
}

func (rc *receiver) reset(cmd receiverCommand) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.secrets = cmd.Secrets
	rc.seen = make(map[string]bool, len(rc.seen))
	rc.s = stats{Gen: cmd.Gen, States: map[string]int{}}
}

// stateChange is the part of a monitor.state_changed body the receiver
// reads.
type stateChange struct {
	Data struct {
		To string    `json:"to"`
		At time.Time `json:"at"`
	} `json:"data"`
}

func (rc *receiver) hook(w http.ResponseWriter, r *http.Request) {
	arrived := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, maxHookBody))
	ch, cerr := strconv.Atoi(r.PathValue("channel"))
	rc.mu.Lock()
	secret := ""
	if cerr == nil && ch >= 0 && ch < len(rc.secrets) {
		secret = rc.secrets[ch]
	}
	rc.mu.Unlock()
	if err != nil || secret == "" {
		rc.count(func(s *stats) { s.Refused++ })
		http.Error(w, "unknown channel", http.StatusNotFound)
		return
	}
	if err := notify.Verify(r.Header.Get(notify.HeaderSignature), body, secret, arrived, notify.DefaultTolerance); err != nil {
		rc.count(func(s *stats) { s.BadSignatures++ })
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var sc *stateChange
	if r.Header.Get(notify.HeaderEvent) == incident.MonitorStateChanged {
		sc = &stateChange{}
		if err := json.Unmarshal(body, sc); err != nil {
			rc.count(func(s *stats) { s.Refused++ })
			http.Error(w, "not JSON", http.StatusBadRequest)
			return
		}
	}
	id := r.Header.Get(notify.HeaderDelivery)
	rc.mu.Lock()
	if rc.seen[id] {
		rc.s.Duplicates++
	} else {
		rc.seen[id] = true
		rc.s.Unique++
		if rc.s.First == 0 {
			rc.s.First = arrived.UnixNano()
		}
		if sc != nil {
			rc.s.States[sc.Data.To]++
			if sc.Data.To == string(monitor.StateDown) {
				rc.s.Down = append(rc.s.Down, downArrival{Delivery: id, At: sc.Data.At.UnixNano(), Arrived: arrived.UnixNano()})
			}
		}
	}
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) count(f func(*stats)) {
	rc.mu.Lock()
	f(&rc.s)
	rc.mu.Unlock()
}

func (rc *receiver) stats(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	s := rc.s
	s.States = maps.Clone(rc.s.States)
	if r.URL.Query().Get("down") == "1" {
		s.Down = append([]downArrival(nil), rc.s.Down...)
	} else {
		s.Down = nil
	}
	rc.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s)
}

// receiverClient is the parent's side of the receiver child.
type receiverClient struct {
	child  *session.Process
	client *http.Client
	gen    int
}

// hookURL is where channel i's deliveries go.
func (rc *receiverClient) hookURL(i int) string { return fmt.Sprintf("%s/hook/%d", rc.child.Base, i) }

// reset gives the receiver the channels' secrets and zeroes its counts,
// and returns once it has applied them.
func (rc *receiverClient) reset(ctx context.Context, secrets []string) error {
	rc.gen++
	line, err := json.Marshal(receiverCommand{Gen: rc.gen, Secrets: secrets})
	if err != nil {
		return err
	}
	if _, err := rc.child.Stdin.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := rc.stats(ctx, false)
		if err != nil {
			return err
		}
		if s.Gen == rc.gen {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("the receiver did not take its secrets within 10 s")
		}
		if err := session.Sleep(ctx, 5*time.Millisecond); err != nil {
			return err
		}
	}
}

// stats reads the receiver's counts; down asks for the DOWN arrivals too.
func (rc *receiverClient) stats(ctx context.Context, down bool) (stats, error) {
	u := rc.child.Base + "/stats"
	if down {
		u += "?down=1"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return stats{}, err
	}
	res, err := rc.client.Do(req)
	if err != nil {
		return stats{}, fmt.Errorf("receiver stats: %w", err)
	}
	defer res.Body.Close()
	var s stats
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil {
		return stats{}, fmt.Errorf("receiver stats: %w", err)
	}
	return s, nil
}

// bareSender sends signed webhook bodies as the notifier renders them: a
// fresh delivery id, the HMAC signature, the POST; keep-alive connections,
// at most concurrency in flight.
type bareSender struct {
	concurrency int
	urls        []string // channel i's hook
	secrets     []string
	prefixes    [][]byte
}

func newBareSender(concurrency, channels int, hook func(int) string) *bareSender {
	s := &bareSender{concurrency: concurrency}
	for i := range channels {
		s.urls = append(s.urls, hook(i))
		s.secrets = append(s.secrets, notify.NewSigningSecret())
		s.prefixes = append(s.prefixes, bareEvent(ids.New(ids.Workspace, time.Now()), i))
	}
	return s
}

// bareEvent is an incident.opened event as Tocsin stores it for a seeded
// manual incident, without its closing brace: each request adds its
// deliveryId, as Tocsin's webhook rendering does.
func bareEvent(wsID string, i int) []byte {
	now := time.Now().UTC().Truncate(time.Microsecond)
	inc := &incident.Incident{ID: ids.New(ids.Incident, now), WorkspaceID: wsID, Title: fmt.Sprintf("Bench incident %06d", i),
		Status: incident.Investigating, Origin: incident.Manual, AffectedMonitors: []string{}, StartedAt: now, CreatedAt: now, UpdatedAt: now,
		Updates: []incident.Update{{Status: incident.Investigating, Message: seed.IncidentMessage, At: now}}}
	ev := incident.Event{ID: ids.New(ids.Event, now), Type: incident.IncidentOpened, CreatedAt: now, WorkspaceID: wsID,
		Data: incident.IncidentData{Incident: inc}}
	body, _ := json.Marshal(ev) // these types always marshal
	return bytes.TrimSuffix(body, []byte("}"))
}

// send makes n deliveries over the channels in turn and returns what did
// not come back 204, by kind.
func (s *bareSender) send(ctx context.Context, n int) map[string]int {
	tr := &http.Transport{MaxIdleConnsPerHost: s.concurrency, IdleConnTimeout: 90 * time.Second}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: notify.AttemptTimeout}
	var next atomic.Int64
	var mu sync.Mutex
	var wg sync.WaitGroup
	failed := map[string]int{}
	for range s.concurrency {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
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
	body := append(append(append(slices.Clip(s.prefixes[ch]), `,"deliveryId":"`...), id...), `"}`...)
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

// rawDB reads the deliveries the server stored.
type rawDB = sql.DB

func openRaw(dbURL string) (*sql.DB, error) {
	if path, ok := strings.CutPrefix(dbURL, "sqlite:"); ok {
		return sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)&_query_only=1")
	}
	return sql.Open("pgx", dbURL)
}

// statuses counts the deliveries by status.
func statuses(ctx context.Context, db *sql.DB) (map[notify.Status]int, error) {
	out := map[notify.Status]int{}
	return out, each(ctx, db, `SELECT status, COUNT(*) FROM deliveries GROUP BY status`, func(rows *sql.Rows) error {
		var s string
		var n int
		err := rows.Scan(&s, &n)
		out[notify.Status(s)] = n
		return err
	})
}

// firstAttempts are the start times of the deliveries' first attempts,
// by delivery id.
func firstAttempts(ctx context.Context, db *sql.DB) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	return out, each(ctx, db, `SELECT delivery_id, started_at FROM delivery_attempts WHERE n = 1`, func(rows *sql.Rows) error {
		var id string
		var us int64
		err := rows.Scan(&id, &us)
		out[id] = time.UnixMicro(us)
		return err
	})
}

// each runs the query q and calls f on each of its rows.
func each(ctx context.Context, db *sql.DB, q string, f func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := f(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}
