package app

import "github.com/tocsin/tocsin/internal/monitor"

// StateChange is a transition of a monitor or heartbeat that a workflow
// made.
type StateChange struct {
	SubjectID string
	monitor.Transition
}
