package session

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// FreshDB makes an empty database of engine for one phase and returns its
// URL, and the run's keyring for what seeds it; Close drops it (unless
// -keep).
func (s *Session) FreshDB(ctx context.Context, engine string) (dbURL, keyring string, err error) {
	if keyring, err = s.Keyring(ctx); err != nil {
		return "", "", err
	}
	s.seq++
	if engine == "sqlite" {
		dir := filepath.Join(s.Dir, fmt.Sprintf("sqlite-%d", s.seq))
		return "sqlite:" + filepath.Join(dir, "tocsin.db"), keyring, os.MkdirAll(dir, 0o755)
	}
	// A name unique to this process and moment.
	name := fmt.Sprintf("bench_%s_%s_%d_%d", s.Area, time.Now().UTC().Format("20060102_150405"), os.Getpid(), s.seq)
	dbURL, drop, err := createDB(ctx, s.PGURL, name, s.Keep, s.Logf)
	if err == nil {
		s.Undo(drop)
	}
	return dbURL, keyring, err
}

// Save writes v as JSON to the file name in the work directory, for a
// child, and returns its path.
func (s *Session) Save(name string, v any) (string, error) {
	path := filepath.Join(s.Dir, name)
	b, err := json.Marshal(v)
	if err == nil {
		err = os.WriteFile(path, b, 0o644)
	}
	return path, err
}

// Keyring is the run's keyring (`tocsin secret-key`), which every server
// of the run is given, and what seeds a database seals secrets with.
func (s *Session) Keyring(ctx context.Context) (string, error) {
	var err error
	if s.keys == "" {
		s.keys, err = run(ctx, "", s.Bin.Path, "secret-key")
	}
	return s.keys, err
}

// Tocsin runs one of the binary's admin commands on the database at dbURL.
func (s *Session) Tocsin(ctx context.Context, dbURL string, args ...string) (string, error) {
	return run(ctx, "", s.Bin.Path, append(args, "--database-url", dbURL)...)
}

// OwnerAPI raises the quotas of the workspace `tocsin serve` made on its
// first start (quota: `tocsin workspace set-quota` flags, such as
// "--heartbeats", 10000) and is a client of srv's API with a key of the
// workspace's owner, with every scope a benchmark writes with.
func (s *Session) OwnerAPI(ctx context.Context, srv *Process, dbURL, quota string, n int, more ...string) (Client, error) {
	_, err := s.Tocsin(ctx, dbURL, append([]string{"workspace", "set-quota", "--workspace", "default", quota, strconv.Itoa(n)}, more...)...)
	if err != nil {
		return Client{}, err
	}
	args := []string{"key", "create", "--email", "owner@localhost", "--workspace", "default", "--name", "bench"}
	for _, sc := range []string{"monitors:read", "monitors:write", "incidents:write", "notifications:write", "status_pages:write"} {
		args = append(args, "--scope", sc)
	}
	key, err := s.Tocsin(ctx, dbURL, args...)
	return API(srv.Base, key), err
}

// Window runs f, a measured window, and splits the machine's CPU time over
// it between the process pid, the PostgreSQL processes that serve dbURL
// (none on SQLite), this process, interrupts and the rest.
func (s *Session) Window(ctx context.Context, pid int, dbURL string, f func()) Share {
	pg := s.Postgres(ctx, dbURL)
	c0 := TakeSample()
	f()
	c1 := TakeSample()
	maps.Copy(pg, s.Postgres(ctx, dbURL)) // backends that connected meanwhile count too
	return Split(c0, c1, pid, pg)
}

// Postgres lists the PostgreSQL processes that work for the database at
// dbURL: its backends and the cluster's background writers; none on SQLite.
func (s *Session) Postgres(ctx context.Context, dbURL string) map[int]bool {
	pg := map[int]bool{}
	if !strings.HasPrefix(dbURL, "postgres") {
		return pg
	}
	db, err := sql.Open("pgx", dbURL)
	if err == nil {
		defer db.Close()
		pg, err = processes(ctx, db)
	}
	if err != nil {
		s.Logf("PostgreSQL's processes: %v", err)
	}
	return pg
}

// Phase runs load for -warmup, unmeasured, and then for -duration with
// the machine's CPU split over that window (Window).
func (s *Session) Phase(ctx context.Context, pid int, dbURL string, load func(d time.Duration) Outcome) (warm, o Outcome) {
	if s.Warmup > 0 {
		warm = load(s.Warmup)
	}
	cpu := s.Window(ctx, pid, dbURL, func() { o = load(s.Duration) })
	o.CPU = cpu
	return warm, o
}
