package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The filters of the lists. Their values are checked here, so the API
// and the web app accept and refuse the same ones; the store only runs
// the query they become. Filters narrow what a cursor walks: a cursor
// holds only a position (the last id seen), so a walk continued with
// other filters is still exact for those filters, from that position on.

// MaxNameQueryLen bounds a name search: no name is longer, so a longer
// search could match nothing.
const MaxNameQueryLen = monitor.MaxNameLen

// MonitorFilter narrows ListMonitors. Each zero field filters nothing;
// a list matches when any of its values does.
type MonitorFilter struct {
	States []monitor.State
	Types  []monitor.Type
	Name   string // the name contains it, ignoring case
}

// normalize checks f and returns it without repeated values.
func (f MonitorFilter) normalize() (MonitorFilter, []errs.FieldError) {
	var problems []errs.FieldError
	problems = append(problems, checkChoices("query.state", f.States, monitor.States)...)
	problems = append(problems, checkChoices("query.type", f.Types, monitor.Types)...)
	if n := utf8.RuneCountInString(f.Name); n > MaxNameQueryLen || !utf8.ValidString(f.Name) {
		problems = append(problems, errs.FieldError{Pointer: "query.q",
			Message: fmt.Sprintf("must be at most %d characters of UTF-8 text", MaxNameQueryLen)})
	}
	f.States, f.Types = unique(f.States), unique(f.Types)
	return f, problems
}

// HeartbeatFilter narrows ListHeartbeats.
type HeartbeatFilter struct {
	States []monitor.State
	Name   string // the name contains it, ignoring case
}

func (f HeartbeatFilter) normalize() (HeartbeatFilter, []errs.FieldError) {
	problems := checkChoices("query.state", f.States, monitor.States)
	if n := utf8.RuneCountInString(f.Name); n > MaxNameQueryLen || !utf8.ValidString(f.Name) {
		problems = append(problems, errs.FieldError{Pointer: "query.q",
			Message: fmt.Sprintf("must be at most %d characters of UTF-8 text", MaxNameQueryLen)})
	}
	f.States = unique(f.States)
	return f, problems
}

// checkChoices names the parameter once when any of its values is not
// one of the choices, and says which would be accepted.
func checkChoices[T ~string](param string, got, choices []T) []errs.FieldError {
	for _, v := range got {
		if !slices.Contains(choices, v) {
			return []errs.FieldError{{Pointer: param, Message: "each value must be one of " + joinChoices(choices)}}
		}
	}
	return nil
}

func joinChoices[T ~string](choices []T) string {
	s := make([]string, len(choices))
	for i, c := range choices {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}

func unique[T comparable](vs []T) []T {
	var out []T
	for _, v := range vs {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// pageProblems adds the problems of a page request's decoding to those
// of its filters, so one answer names them all.
func pageProblems(problems []errs.FieldError, err error) error {
	var e *errs.Error
	if err != nil && (!errors.As(err, &e) || len(e.Fields) == 0) {
		return err
	}
	if e != nil {
		problems = append(problems, e.Fields...)
	}
	if len(problems) > 0 {
		return invalid(problems)
	}
	return nil
}
