package session

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Child runs this binary again in one of the area's child modes (args),
// and waits for the URL it prints first; Close stops it.
func (s *Session) Child(ctx context.Context, name string, args ...string) (*Process, error) {
	p, err := StartChild(ctx, s.Self, s.Dir, name, nil, append([]string{s.Area}, args...)...)
	if err == nil {
		s.Undo(func() { p.Stop(30 * time.Second) })
	}
	return p, err
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
	dbURL, drop, err := Create(ctx, s.PGURL, Name("bench_"+s.Area, s.seq), s.Keep, s.Logf)
	if err == nil {
		s.Undo(drop)
	}
	return dbURL, keyring, err
}

// Keyring is the run's keyring (`tocsin secret-key`), which every server
// of the run is given, and what seeds a database seals secrets with.
func (s *Session) Keyring(ctx context.Context) (string, error) {
	var err error
	if s.keys == "" {
		s.keys, err = s.Bin.Run(ctx, "secret-key")
	}
	return s.keys, err
}

// Serve starts `tocsin serve` on the database at dbURL with a new keyring,
// as an operator runs it (the keyring in the environment, the database on
// the command line), and args; Close stops it.
func (s *Session) Serve(ctx context.Context, name, dbURL string, args ...string) (*Process, error) {
	keys, err := s.Keyring(ctx)
	if err != nil {
		return nil, err
	}
	args = append([]string{"--data-dir", filepath.Join(s.Dir, name), "--database-url", dbURL}, args...)
	p, err := s.Bin.Serve(ctx, s.Dir, name, []string{"TOCSIN_SECRET_KEYS=" + keys}, args...)
	if err != nil {
		return nil, err
	}
	s.Undo(func() { p.Stop(60 * time.Second) })
	s.Logf("%s: tocsin serve at %s (pid %d)", name, p.Base, p.Pid())
	return p, nil
}

// Tocsin runs one of the binary's admin commands on the database at dbURL.
func (s *Session) Tocsin(ctx context.Context, dbURL string, args ...string) (string, error) {
	return s.Bin.Run(ctx, append(args, "--database-url", dbURL)...)
}

// Machine describes the machine, the binary measured and, when the run
// used one, the PostgreSQL server.
func (s *Session) Machine(ctx context.Context) Machine {
	m := Describe()
	m.Tocsin = s.Bin.Rev
	if slices.Contains(s.Engines, "postgres") {
		m.Postgres = ServerVersion(ctx, s.PGURL)
	}
	return m
}

// Print writes the report: its title, the machine, and what body writes;
// to standard output and, with -out, to that file.
func (s *Session) Print(ctx context.Context, title string, body func(w io.Writer)) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%s.\n\n", title, s.Machine(ctx))
	body(&b)
	if _, err := io.WriteString(s.Stdout, b.String()); err != nil || s.Out == "" {
		return err
	}
	return os.WriteFile(s.Out, []byte(b.String()), 0o644)
}

// OwnerKey raises the quotas of the workspace `tocsin serve` made on its
// first start (quota: `tocsin workspace set-quota` flags, such as
// "--heartbeats", "10000") and makes a key of its owner with every scope
// a benchmark writes with.
func (s *Session) OwnerKey(ctx context.Context, dbURL string, quota ...string) (string, error) {
	if len(quota) > 0 {
		if _, err := s.Tocsin(ctx, dbURL, append([]string{"workspace", "set-quota", "--workspace", "default"}, quota...)...); err != nil {
			return "", err
		}
	}
	args := []string{"key", "create", "--email", "owner@localhost", "--workspace", "default", "--name", "bench"}
	for _, sc := range []string{"monitors:read", "monitors:write", "incidents:write", "notifications:write", "status_pages:write"} {
		args = append(args, "--scope", sc)
	}
	return s.Tocsin(ctx, dbURL, args...)
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
		pg, err = Processes(ctx, db)
	}
	if err != nil {
		s.Logf("PostgreSQL's processes: %v", err)
	}
	return pg
}

// Measure opens an area's run (Start), measures with run, prints the
// report it returns under title (Print), and closes the run. A run that
// needs the tocsin binary needs an engine too.
func Measure(ctx context.Context, area string, e Env, noTocsin bool, title string, run func(*Session) (report func(io.Writer), err error)) error {
	if !noTocsin && len(e.Engines) == 0 {
		return errors.New("nothing to measure: no engine")
	}
	s, err := Start(ctx, area, e, noTocsin)
	defer s.Close()
	if err != nil {
		return err
	}
	report, err := run(s)
	if err != nil {
		return err
	}
	return s.Print(ctx, title, report)
}

// PerEngine measures each engine of the run in turn with f.
func PerEngine[R any](s *Session, f func(engine string) (R, error)) ([]R, error) {
	var out []R
	for _, e := range s.Engines {
		r, err := f(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e, err)
		}
		out = append(out, r)
	}
	return out, nil
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
