package apiprof

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/httpapi"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// parallelism × GOMAXPROCS goroutines send requests, like apibench's 32
// clients on a 2-CPU machine.
const parallelism = 16

// server is the handler chain `tocsin serve` builds, over a fresh database
// with one owner, one key and one monitor.
type server struct {
	db      *store.DB
	app     *app.App
	handler http.Handler
	key     string
	wsID    string
	monitor string
}

func engines() []storetest.Engine {
	e := []storetest.Engine{{Name: store.EngineSQLite, URL: "sqlite:"}}
	if u := os.Getenv(storetest.PostgresURLEnv); u != "" {
		e = append(e, storetest.Engine{Name: store.EnginePostgres, URL: u})
	}
	return e
}

func newServer(b *testing.B, e storetest.Engine) *server {
	b.Helper()
	return newServerOn(b, storetest.OpenDB(b, e))
}

func newServerOn(b *testing.B, db *store.DB) *server {
	b.Helper()
	ctx := context.Background()
	spec, err := secrets.GenerateKeySpec("k1")
	if err != nil {
		b.Fatal(err)
	}
	kr, err := secrets.ParseKeyring(spec)
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// A high rate limit, as apibench uses, and a quota that creates never reach.
	a := app.New(db, kr, time.Now, log, app.Config{RatePerMinute: 1_000_000, DefaultMaxMonitors: 1 << 30})
	u, err := a.CreateUser(ctx, app.UserRequest{Email: "owner@bench.test", Workspace: "default", Role: "owner"})
	if err != nil {
		b.Fatal(err)
	}
	k, err := a.CreateKeyForUser(ctx, app.OperatorKeyRequest{Email: "owner@bench.test", Workspace: "default",
		Scopes: []string{"monitors:read", "monitors:write"}})
	if err != nil {
		b.Fatal(err)
	}
	root := http.NewServeMux()
	api := httpapi.New(a, log, httpapi.Options{})
	root.Handle(httpapi.Prefix+"/", api)
	root.Handle("/", api)
	s := &server{db: db, app: a, handler: httpapi.Observe(log, root), key: k.Secret, wsID: u.Workspace.ID}
	rec := s.do(http.MethodPost, "/api/v1/monitors", createBody)
	if rec.Code != http.StatusCreated {
		b.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	var m struct{ ID string }
	if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
		b.Fatal(err)
	}
	s.monitor = m.ID
	return s
}

const createBody = `{"type":"http","name":"bench","paused":true,"config":{"url":"http://127.0.0.1:9/health"}}`

func (s *server) do(method, path, body string) *httptest.ResponseRecorder {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, r)
	req.Header.Set("Authorization", "Bearer "+s.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	s.handler.ServeHTTP(rec, req)
	return rec
}

// parallel runs f from parallelism × GOMAXPROCS goroutines.
func parallel(b *testing.B, f func() error) {
	b.Helper()
	b.SetParallelism(parallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := f(); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

type statusError struct {
	code int
	body string
}

func (e statusError) Error() string { return http.StatusText(e.code) + ": " + e.body }

func expect(rec *httptest.ResponseRecorder, code int) error {
	if rec.Code != code {
		return statusError{rec.Code, rec.Body.String()}
	}
	return nil
}

var bareBody = []byte(strings.Repeat("x", 500))

// BenchmarkHandler serves requests through the whole handler chain of
// `tocsin serve`, without the network.
func BenchmarkHandler(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(bareBody)
		})
		parallel(b, func() error {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/monitors/x", nil))
			return expect(rec, http.StatusOK)
		})
	})
	for _, e := range engines() {
		b.Run(e.Name+"-get", func(b *testing.B) {
			s := newServer(b, e)
			path := "/api/v1/monitors/" + s.monitor
			parallel(b, func() error { return expect(s.do(http.MethodGet, path, ""), http.StatusOK) })
		})
		b.Run(e.Name+"-post", func(b *testing.B) {
			s := newServer(b, e)
			parallel(b, func() error { return expect(s.do(http.MethodPost, "/api/v1/monitors", createBody), http.StatusCreated) })
		})
	}
}

// BenchmarkStore times the store calls one authenticated GET makes, to
// tell the database's share from the HTTP layer's.
func BenchmarkStore(b *testing.B) {
	for _, e := range engines() {
		b.Run(e.Name, func(b *testing.B) {
			s := newServer(b, e)
			ctx := context.Background()
			sum := sha256.Sum256([]byte(s.key))
			b.Run("KeyGrantByHash", func(b *testing.B) {
				parallel(b, func() error { _, err := s.db.KeyGrantByHash(ctx, sum[:], ""); return err })
			})
			// Rate limits: in memory on SQLite, leased from the database on
			// PostgreSQL.
			b.Run("TakeRate", func(b *testing.B) {
				parallel(b, func() error { _, err := s.app.TakeRate(ctx, "key:bench"); return err })
			})
			b.Run("GetMonitor", func(b *testing.B) {
				parallel(b, func() error { _, err := s.db.GetMonitor(ctx, s.wsID, s.monitor); return err })
			})
		})
	}
}
