package app

import (
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// StateChange is a transition of a monitor or heartbeat that a workflow
// made (monitor.StateChange).
type StateChange = monitor.StateChange

// IsDataError reports whether the database refused a write for what it
// carries (a value out of range, invalid text, a constraint), not for a
// passing failure: a runner sets such rows aside instead of retrying them.
func IsDataError(err error) bool { return store.IsDataError(err) }
