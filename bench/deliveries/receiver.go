package deliveries

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/tocsin/tocsin/bench/internal/child"
	"github.com/tocsin/tocsin/bench/internal/session"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
)

// The webhook receiver, the -receive mode of this binary: what
// docs/webhooks.md tells users to write. POST /hook/{channel} verifies
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
	Bytes         int64 `json:"bytes"`         // of the unique deliveries' bodies
	Conns         int   `json:"conns"`         // connections opened to it
	First         int64 `json:"first"`         // unix ns of the first unique arrival; 0: none
	Last          int64 `json:"last"`          // and of the last
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

func serveReceiver(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) error {
	rc := &receiver{seen: map[string]bool{}, s: stats{States: map[string]int{}}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /hook/{channel}", rc.hook)
	mux.HandleFunc("GET /stats", rc.stats)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				rc.mu.Lock()
				rc.s.Conns++
				rc.mu.Unlock()
			}
		},
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if _, err := fmt.Fprintln(stdout, "http://"+ln.Addr().String()); err != nil {
		return err
	}
	eof := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdin)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var cmd receiverCommand
			if err := json.Unmarshal(sc.Bytes(), &cmd); err != nil {
				eof <- fmt.Errorf("command: %w", err)
				return
			}
			rc.reset(cmd)
		}
		eof <- sc.Err()
	}()
	select {
	case err := <-errc:
		return err
	case err = <-eof:
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return errors.Join(err, srv.Shutdown(sctx))
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
		rc.s.Bytes += int64(len(body))
		if rc.s.First == 0 {
			rc.s.First = arrived.UnixNano()
		}
		rc.s.Last = max(rc.s.Last, arrived.UnixNano())
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
	child  *child.Process
	client *http.Client
	gen    int
}

func newReceiverClient(c *child.Process) *receiverClient {
	// Its own transport: the polls never share connections with a sender.
	return &receiverClient{child: c, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2}, Timeout: 10 * time.Second}}
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
