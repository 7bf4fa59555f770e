package session

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

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

// Defaults are an area's defaults for the shared flags that depend on it;
// a zero Duration or Rounds leaves that flag out of the area.
type Defaults struct {
	Duration, Warmup time.Duration
	Rounds           int
}

// Env is what an area's run gets: the shared flags and the streams.
type Env struct {
	Common
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// Run measures an area.
type Run func(ctx context.Context, e Env) error

// Register adds the shared flags to fs; Parse reads them once fs is parsed.
func (c *Common) Register(fs *flag.FlagSet, d Defaults, engines *string) {
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
	page := fs.String("bare-page", "", "internal: the answer the bare handler serves")
	return func(ctx context.Context, e Env) error {
		if *on {
			return serveBare(ctx, *page, e.Stdin, e.Stdout)
		}
		return run(ctx, e)
	}
}
