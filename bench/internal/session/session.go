// Package session is what every area of the bench command shares for one
// run: its flags, work directory, log and report; the tocsin binary it
// measures and the processes it starts (servers under test, this binary
// re-executed as a baseline or receiver); fresh databases; Linux's CPU
// and memory counters, split between the server, PostgreSQL and the
// rest; and the HTTP load that drives a server.
package session

import (
	"bytes"
	"context"
	"database/sql"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx"
)

// Session is one run of an area: its flags, log, work directory and
// binaries, and what to undo at the end.
type Session struct {
	Env         // the shared flags and the streams
	Area string // the area measured: this binary's first argument, for its children
	Dir  string // the work directory: logs, SQLite files
	Self string // this binary
	Bin  Binary // the tocsin measured; zero when the run needs none
	undo []func()
	seq  int    // databases made
	keys string // the run's keyring
}

// Bench is an area's run: it measures, with Run or, engine by engine of
// the run, with Engine, then reports.
type Bench interface{ Report(w *Report) }

// Measure runs an area: it opens the run (its work directory, this
// binary for its children and, with an engine, the tocsin binary it
// measures), measures with the Bench open makes, prints its report under
// title, and undoes what the run made. With no engine, only a run whose
// baseline may stand alone (alone) measures something.
func Measure(ctx context.Context, area string, e Env, alone bool, title string, open func(*Session) Bench) (err error) {
	if len(e.Engines) == 0 && !alone {
		return errors.New("nothing to measure")
	}
	s := &Session{Env: e, Area: area}
	defer s.Close()
	if s.Dir, err = os.MkdirTemp("", "bench-"+area+"-"); err != nil {
		return err
	}
	if s.Self, err = os.Executable(); err != nil {
		return err
	}
	if len(e.Engines) > 0 {
		if e.Tocsin == "" {
			s.Logf("building ./cmd/tocsin")
		}
		if s.Bin, err = openBinary(ctx, e.Tocsin, s.Dir); err != nil {
			return err
		}
	}
	b := open(s)
	switch m := b.(type) {
	case interface{ Run(context.Context) error }:
		err = m.Run(ctx)
	case interface {
		Engine(context.Context, string) error
	}:
		for _, e := range s.Engines {
			if err = m.Engine(ctx, e); err != nil {
				return fmt.Errorf("%s: %w", e, err)
			}
		}
	}
	if err != nil {
		return err
	}
	var r Report
	r.Printf("# %s\n\n%s.\n\n", title, s.Machine(ctx))
	b.Report(&r)
	if _, err := io.WriteString(s.Stdout, r.String()); err != nil || s.Out == "" {
		return err
	}
	return os.WriteFile(s.Out, []byte(r.String()), 0o644)
}

// Rotate runs f for each of -rounds rounds over n targets, the targets in
// a rotating order: none always first or last.
func (s *Session) Rotate(n int, f func(round, target int) error) error {
	for r := range s.Rounds {
		for i := range n {
			if err := f(r, (i+r)%n); err != nil {
				return fmt.Errorf("round %d: %w", r+1, err)
			}
		}
	}
	return nil
}

// Logf writes a progress line, with the time.
func (s *Session) Logf(format string, args ...any) {
	fmt.Fprintf(s.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// Undo adds f to what Close does (dropping a database), newest first.
func (s *Session) Undo(f func()) { s.undo = append(s.undo, f) }

// Close undoes what the run made and removes the work directory, unless
// -keep asked to keep it.
func (s *Session) Close() {
	for _, f := range slices.Backward(s.undo) {
		f()
	}
	switch {
	case s.Dir == "":
	case s.Keep:
		s.Logf("kept work directory %s", s.Dir)
	default:
		os.RemoveAll(s.Dir)
	}
}

// Sleep waits d, or less when ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Poll calls cond every interval until it holds or fails, or until limit
// has passed (an error) or ctx ends.
func Poll(ctx context.Context, every, limit time.Duration, cond func() (bool, error)) error {
	for deadline := time.Now().Add(limit); ; {
		if ok, err := cond(); ok || err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", limit)
		}
		if err := Sleep(ctx, every); err != nil {
			return err
		}
	}
}

// AtLeast1 says which of the flags named (as "-a, -b and -c") must be at
// least 1, when one of vals is less.
func AtLeast1(names string, vals ...int) error {
	if slices.Min(vals) < 1 {
		return fmt.Errorf("%s must be at least 1", names)
	}
	return nil
}

// Common is what the flags every area shares ask for.
type Common struct {
	Engines  []string // sqlite, postgres
	PGURL    string   // a PostgreSQL server whose user may CREATE DATABASE
	Tocsin   string   // the binary measured; "": build ./cmd/tocsin
	Out      string   // also write the report here
	Keep     bool     // keep the work directory and databases
	Duration time.Duration
	Warmup   time.Duration
	Rounds   int
}

// Env is what an area's run gets: the shared flags and the streams.
type Env struct {
	Common
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Run measures an area.
type Run func(ctx context.Context, e Env) error

// Register adds the shared flags to fs, -duration, -warmup and -rounds
// with the area's defaults d (a zero Duration or Rounds leaves that flag
// out of the area); Parse reads them once fs is parsed.
func (c *Common) Register(fs *flag.FlagSet, d Common, engines *string) {
	fs.StringVar(engines, "engines", "sqlite,postgres", "comma-separated database engines to measure")
	fs.StringVar(&c.PGURL, "pg-url", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
		"PostgreSQL server whose user may CREATE DATABASE; a fresh database is made and dropped; empty skips postgres")
	fs.StringVar(&c.Tocsin, "tocsin", "", "path to a tocsin binary; default: build ./cmd/tocsin of this module")
	fs.StringVar(&c.Out, "out", "", "also write the report (markdown) to this file")
	fs.BoolVar(&c.Keep, "keep", false, "keep the work directory (logs, SQLite files) and the PostgreSQL databases")
	if d.Duration > 0 {
		fs.DurationVar(&c.Duration, "duration", d.Duration, "measured time per target and round")
		fs.DurationVar(&c.Warmup, "warmup", d.Warmup, "unmeasured load before each measured window")
	}
	if d.Rounds > 0 {
		fs.IntVar(&c.Rounds, "rounds", d.Rounds, "rounds, the targets in a rotating order")
	}
}

// Parse reads the engines list: sqlite and postgres, postgres left out
// (with a line to warn) when there is no server URL.
func (c *Common) Parse(engines string, warn io.Writer) error {
	for e := range strings.SplitSeq(engines, ",") {
		switch e = strings.TrimSpace(e); {
		case e == "":
		case e != "sqlite" && e != "postgres":
			return fmt.Errorf("unknown engine %q; known: sqlite, postgres", e)
		case e == "postgres" && c.PGURL == "":
			fmt.Fprintln(warn, "skipping postgres: -pg-url is empty")
		default:
			c.Engines = append(c.Engines, e)
		}
	}
	return nil
}

// BareFlags registers the bare handler's child flags (BareChild) and
// returns run, or that child when the flags ask for it.
func BareFlags(fs *flag.FlagSet, run Run) Run {
	on := fs.Bool("bare-serve", false, "internal: serve the bare handler")
	return func(ctx context.Context, e Env) error {
		if *on {
			return serveBare(ctx, e.Stdin, e.Stdout)
		}
		return run(ctx, e)
	}
}

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
	name := fmt.Sprintf("bench_%s_%s_%d_%d", s.Area, time.Now().UTC().Format("20060102_150405"), os.Getpid(), s.seq)
	if err := s.pg(ctx, s.PGURL, func(db *sql.DB) error {
		_, err := db.ExecContext(ctx, "CREATE DATABASE "+name)
		return err
	}); err != nil {
		return "", "", fmt.Errorf("creating database %s: %w", name, err)
	}
	s.Undo(func() {
		if s.Keep {
			s.Logf("kept PostgreSQL database %s", name)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := s.pg(ctx, s.PGURL, func(db *sql.DB) error {
			_, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			return err
		}); err != nil {
			s.Logf("dropping %s: %v", name, err)
		}
	})
	u, err := url.Parse(s.PGURL)
	if err == nil {
		u.Path = "/" + name
	}
	return u.String(), keyring, err
}

// pg runs f on a connection to the PostgreSQL database at dbURL.
func (s *Session) pg(ctx context.Context, dbURL string, f func(*sql.DB) error) error {
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	return f(db)
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
// dbURL, whose CPU time a benchmark charges to PostgreSQL: the backends
// connected to it (but the one asking) and the cluster's background
// processes; none on SQLite.
func (s *Session) Postgres(ctx context.Context, dbURL string) map[int]bool {
	pids := map[int]bool{}
	if !strings.HasPrefix(dbURL, "postgres") {
		return pids
	}
	err := s.pg(ctx, dbURL, func(db *sql.DB) error {
		rows, err := db.QueryContext(ctx, `SELECT pid FROM pg_stat_activity
			WHERE (datname = current_database() AND pid <> pg_backend_pid())
			OR backend_type IN ('checkpointer', 'background writer', 'walwriter', 'autovacuum launcher')`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var pid int
			if err := rows.Scan(&pid); err != nil {
				return err
			}
			pids[pid] = true
		}
		return rows.Err()
	})
	if err != nil {
		s.Logf("PostgreSQL's processes: %v", err)
	}
	return pids
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

// Binary is a tocsin binary and the commit it was built from.
type Binary struct{ Path, Rev string }

// openBinary is the binary at path, or, when path is empty, ./cmd/tocsin
// of the module holding the current directory built into dir, with the
// commit git describes (GOFLAGS may keep go build from recording it).
func openBinary(ctx context.Context, path, dir string) (Binary, error) {
	if path != "" {
		return Binary{Path: path, Rev: describe(path)}, nil
	}
	gomod, err := run(ctx, "", "go", "env", "GOMOD")
	if err != nil {
		return Binary{}, err
	}
	if gomod == "" || gomod == os.DevNull {
		return Binary{}, errors.New("not inside a Go module; run from the tocsin module root or pass -tocsin")
	}
	root := filepath.Dir(gomod)
	b := Binary{Path: filepath.Join(dir, "tocsin"), Rev: "unknown commit"}
	if rev, err := run(ctx, "", "git", "-C", root, "describe", "--always", "--dirty"); err == nil {
		b.Rev = rev + " (git describe --dirty, built by the benchmark)"
	}
	_, err = run(ctx, root, "go", "build", "-o", b.Path, "./cmd/tocsin")
	return b, err
}

// describe names the commit a Go binary was built from, as go build
// recorded it.
func describe(path string) string {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return path
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return path + " (" + info.GoVersion + ", no VCS information)"
	}
	rev = rev[:min(len(rev), 12)]
	if modified == "true" {
		rev += " with uncommitted changes"
	}
	return path + " at commit " + rev
}

// run runs name with args in dir ("" for this one) and returns its trimmed
// standard output; an error carries its standard error.
func run(ctx context.Context, dir, name string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args[:min(len(args), 2)], " "), err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}
