// Package maintenance holds maintenance windows as users keep them: when
// each is open, and which monitors and heartbeats it covers. Package recur
// does the calendar arithmetic; this package only says what a window's
// fields mean to it, so recur stays free of workspaces and subjects. The
// store keeps windows, app validates them, and the check engine applies
// them. It is pure: no clock, no I/O.
package maintenance

import (
	"errors"
	"slices"
	"sync"
	"time"
	_ "time/tzdata" // IANA zones even where the system has none (minimal containers)

	"github.com/tocsin/tocsin/internal/recur"
)

// Window is a maintenance window as a workspace keeps it. It is one-off
// (StartsAt, EndsAt) or recurring: exactly one of Cron and RRule, read in
// Timezone, each occurrence open for Duration of elapsed time; no
// occurrence begins before StartsAt (also the RRULE's DTSTART) nor after
// Until (zero: no end).
type Window struct {
	ID           string
	WorkspaceID  string
	Name         string
	Description  string
	StartsAt     time.Time
	EndsAt       time.Time // one-off only
	Cron         string
	RRule        string
	Timezone     string // recurring only
	Duration     time.Duration
	Until        time.Time
	MonitorIDs   []string // sorted
	HeartbeatIDs []string // sorted
	// Public shows the window, its name and description, on the status
	// pages that hold any of its monitors or heartbeats.
	Public    bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Recurring reports whether the window repeats.
func (w Window) Recurring() bool { return w.Cron != "" || w.RRule != "" }

// Timing is the window as package recur computes it. When the window is
// invalid the error is recur.FieldErrors naming every failing field as
// recur.Window.Validate does, with "rule.location" for the time zone.
func (w Window) Timing() (recur.Window, error) {
	win := recur.Window{Start: w.StartsAt, End: w.EndsAt, Duration: w.Duration, Until: w.Until}
	if !w.Recurring() {
		return win, win.Validate()
	}
	loc, zerr := zone(w.Timezone)
	var (
		rule recur.Rule
		err  = zerr
	)
	switch {
	case err != nil:
	case w.Cron != "" && w.RRule != "":
		err = errors.New("both cron and rrule")
	case w.Cron != "":
		rule, err = recur.ParseCron(w.Cron, loc)
	default:
		rule, err = recur.ParseRRule(w.RRule, w.StartsAt, loc)
	}
	if err == nil {
		win.Rule = &rule
		if err = win.Validate(); err == nil {
			return win, nil
		}
	}
	// Say which fields fail: validate again with the rule as written.
	var problems recur.FieldErrors
	if zerr != nil {
		problems = append(problems, recur.FieldError{Field: "rule.location", Message: zerr.Error()})
	}
	win.Rule = &recur.Rule{Cron: w.Cron, RRule: w.RRule, Location: loc, DTStart: w.StartsAt}
	if fes, ok := win.Validate().(recur.FieldErrors); ok {
		for _, fe := range fes {
			if !slices.ContainsFunc(problems, func(e recur.FieldError) bool { return e.Field == fe.Field }) {
				problems = append(problems, fe)
			}
		}
	}
	if len(problems) == 0 {
		return recur.Window{}, err // cannot happen: parsing and Validate agree
	}
	return recur.Window{}, problems
}

// zones caches loaded time zones: the sweep evaluates every window every few
// seconds, and loading a zone reads and parses its file.
var zones sync.Map // name → *time.Location

// errZone does not repeat the name: an answer never echoes what was sent.
var errZone = errors.New("must be an IANA time zone name such as Europe/Berlin or UTC")

// zone loads an IANA time zone. "Local" is refused: it would mean whatever
// zone the server happens to run in.
func zone(name string) (*time.Location, error) {
	if l, ok := zones.Load(name); ok {
		return l.(*time.Location), nil
	}
	if name == "" || name == "Local" || len(name) > 64 {
		return nil, errZone
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, errZone
	}
	zones.Store(name, loc)
	return loc, nil
}
