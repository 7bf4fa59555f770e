package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// With -cpuprofile the engine child profiles its CPU over the measured
// window, and the report splits that time by what the goroutine was
// doing: running checks, storing observations, claiming due checks, or
// the Go runtime's own work. The stacks come from `go tool pprof -traces`,
// so no profile library is needed.

// part is one share of the profile.
type part struct {
	Name string
	Time time.Duration
}

// profileSplit is a profile's samples by part, and its top functions.
type profileSplit struct {
	Total time.Duration
	Parts []part
	Top   string // `go tool pprof -top` of the heaviest functions
}

// The parts, in the order a stack is tested against them: the first that
// one of its frames matches takes the sample. A function matches exactly
// (so the closure claim.func1, which starts a check, is not the claim); a
// prefix ends in "." or ")" and matches every function under it.
var profileParts = []struct {
	name   string
	frames []string
}{
	{"storing (observation writer)", []string{"internal/engine.(*writer)."}},
	{"claiming due checks", []string{"internal/engine.(*Engine).claim"}},
	{"stale sweep", []string{"internal/engine.(*Engine).sweep"}},
	{"database driver, other goroutines", []string{"database/sql.", "github.com/jackc/pgx/v5.", "github.com/jackc/pgx/v5/pgconn.", "modernc.org/sqlite."}},
	{"checking (probe, HTTP client, timers)", []string{"internal/engine.(*Engine).start", "internal/probe.", "net/http.", "net.", "internal/poll.",
		"main.serveBare."}},
	{"GC (background workers)", []string{"runtime.gcBgMarkWorker", "runtime.bgsweep", "runtime.bgscavenge"}},
	{"Go scheduler and other runtime", []string{"runtime."}},
}

// matches reports whether the frame (a full function name) is want, or
// lies under want when want ends in "." or ")".
func matches(frame, want string) bool {
	if strings.HasSuffix(want, ".") || strings.HasSuffix(want, ")") {
		return strings.HasPrefix(frame, want) || strings.Contains(frame, "/"+want)
	}
	return frame == want || strings.HasSuffix(frame, "/"+want)
}

const otherPart = "other"

func splitProfile(ctx context.Context, path string) (*profileSplit, error) {
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-traces", path).Output()
	if err != nil {
		return nil, fmt.Errorf("go tool pprof -traces %s: %w", path, err)
	}
	p := parseTraces(out)
	top, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-nodecount=25", path).Output()
	if err == nil {
		p.Top = string(top)
	}
	return p, nil
}

// parseTraces splits the output of `go tool pprof -traces`.
func parseTraces(out []byte) *profileSplit {
	p := &profileSplit{}
	byPart := map[string]time.Duration{}
	var (
		value  time.Duration
		frames []string
	)
	flush := func() {
		if value == 0 {
			return
		}
		name := otherPart
	find:
		for _, pp := range profileParts {
			for _, f := range frames {
				for _, want := range pp.frames {
					if matches(f, want) {
						name = pp.name
						break find
					}
				}
			}
		}
		byPart[name] += value
		p.Total += value
		value, frames = 0, frames[:0]
	}
	s := bufio.NewScanner(bytes.NewReader(out))
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, "-----------+") {
			flush()
			continue
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		// A sample's first line is "<time> <frame>", the others "<frame>";
		// header lines ("File:", "Type:" …) come before the first separator.
		if d, err := time.ParseDuration(f[0]); err == nil && len(f) >= 2 && value == 0 {
			value, frames = d, append(frames, f[1])
			continue
		}
		if value != 0 {
			frames = append(frames, f[0])
		}
	}
	flush()
	for _, pp := range profileParts {
		if d := byPart[pp.name]; d > 0 {
			p.Parts = append(p.Parts, part{pp.name, d})
		}
	}
	if d := byPart[otherPart]; d > 0 {
		p.Parts = append(p.Parts, part{otherPart, d})
	}
	return p
}
