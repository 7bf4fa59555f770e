package app

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
)

// TestFilterRules: the filters' values are judged in app, for the API
// and the web app alike: each bad parameter named once, with what it takes.
func TestFilterRules(t *testing.T) {
	f, problems := MonitorFilter{
		States: []monitor.State{"DOWN", "DOWN", "down"},
		Types:  []monitor.Type{"smtp"},
		Name:   strings.Repeat("x", MaxNameQueryLen+1),
	}.normalize()
	var where []string
	for _, p := range problems {
		where = append(where, p.Pointer)
		if p.Pointer == "query.state" && !strings.Contains(p.Message, "PENDING, UP, DEGRADED, DOWN, UNKNOWN, PAUSED, MAINTENANCE") {
			t.Errorf("query.state: %q", p.Message)
		}
	}
	if !slices.Equal(where, []string{"query.state", "query.type", "query.q"}) {
		t.Errorf("problems at %v", where)
	}
	if !slices.Equal(f.States, []monitor.State{"DOWN", "down"}) {
		t.Errorf("repeated values stay: %v", f.States)
	}
	if _, problems := (MonitorFilter{States: monitor.States, Types: monitor.Types, Name: strings.Repeat("é", MaxNameQueryLen)}).normalize(); len(problems) != 0 {
		t.Errorf("valid filters refused: %v", problems)
	}
	if _, problems := (HeartbeatFilter{States: []monitor.State{"LATE"}}).normalize(); len(problems) != 1 || problems[0].Pointer != "query.state" {
		t.Errorf("heartbeats: %v", problems)
	}
	if _, problems := (HeartbeatFilter{Name: "bad \xff"}).normalize(); len(problems) != 1 || problems[0].Pointer != "query.q" {
		t.Errorf("heartbeats' name: %v", problems)
	}
	if _, problems := (HeartbeatFilter{Name: strings.Repeat("é", MaxNameQueryLen)}).normalize(); len(problems) != 0 {
		t.Errorf("heartbeats' valid name refused: %v", problems)
	}
}

// TestFilterAndPageProblemsTogether: a bad filter and a bad cursor are
// named in one answer.
func TestFilterAndPageProblemsTogether(t *testing.T) {
	_, problems := MonitorFilter{Types: []monitor.Type{"smtp"}}.normalize()
	_, _, err := PageRequest{Cursor: "not-a-cursor"}.decode()
	var e *errs.Error
	if !errors.As(pageProblems(problems, err), &e) || len(e.Fields) != 2 ||
		e.Fields[0].Pointer != "query.type" || e.Fields[1].Pointer != "query.cursor" {
		t.Errorf("%v", e)
	}
	if pageProblems(nil, nil) != nil {
		t.Error("no problems, yet an error")
	}
}
