package heartbeat

import (
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// Heartbeat is a stored heartbeat with its runtime.
type Heartbeat struct {
	ID                string
	WorkspaceID       string
	Name              string
	Schedule          Schedule
	MaxRuntimeSeconds int
	Paused            bool
	// Token is the ping token, in memory only: set when the heartbeat is
	// made or its token rotated, or opened for its ping URL.
	Token     string
	Runtime   Runtime
	CreatedAt time.Time
	UpdatedAt time.Time
	// SLO is the heartbeat's objective; nil: none.
	SLO *monitor.SLO
}

// Settings compiles the heartbeat's schedule for its state machine.
func (h Heartbeat) Settings() (Settings, error) {
	plan, err := h.Schedule.Compile()
	return Settings{Plan: plan, MaxRuntime: time.Duration(h.MaxRuntimeSeconds) * time.Second}, err
}

// NextDeadline is when the heartbeat next becomes late or overruns, zero
// when nothing is due.
func (h Heartbeat) NextDeadline() time.Time {
	s, err := h.Settings()
	if err != nil {
		return time.Time{}
	}
	if w := h.Runtime.Wake(s); !w.Equal(Never) {
		return w
	}
	return time.Time{}
}

// State is the heartbeat's state.
func (h Heartbeat) State() monitor.State { return h.Runtime.State }
