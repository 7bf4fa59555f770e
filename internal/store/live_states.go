package store

import (
	"context"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
)

// LiveState is what the web app's live view patches of one monitor or
// heartbeat: its state, and its latest check or ping.
type LiveState struct {
	ID        string
	Heartbeat bool
	State     monitor.State
	Since     time.Time
	Paused    bool
	LastAt    time.Time     // zero: never checked or pinged
	Latency   time.Duration // a monitor's last check, a heartbeat's last run; negative: none
	Reason    string        // a monitor's last failure
	Created   time.Time
}

// WorkspaceStates returns the live state of every monitor and heartbeat
// of the workspace, in one query: the live view polls it every few
// seconds for everyone watching the workspace, on whichever node.
func (db *DB) WorkspaceStates(ctx context.Context, wsID string) (out []LiveState, err error) {
	defer errs.Wrap(&err, "store.WorkspaceStates(%s)", wsID)
	// A heartbeat's state may still be in the SQLite ping journal.
	if err := db.flushPings(ctx); err != nil {
		return nil, err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT m.id, 0, r.state, r.state_since, m.paused, r.last_check_at,
				CASE WHEN r.last_check_at = 0 THEN -1 ELSE r.last_latency_us END, r.last_reason, m.created_at
			FROM monitors m JOIN monitor_runtime r ON r.monitor_id = m.id
			WHERE m.workspace_id = $1
		UNION ALL
		SELECT h.id, 1, r.state, r.state_since, h.paused, r.last_ping_at, r.last_duration_us, '', h.created_at
			FROM heartbeats h JOIN heartbeat_runtime r ON r.heartbeat_id = h.id
			WHERE h.workspace_id = $1`, wsID)
	return collect(rows, err, func(r rowScanner) (LiveState, error) {
		var (
			s                    LiveState
			kind                 int
			state                string
			since, last, latency int64
			created              int64
		)
		if err := r.Scan(&s.ID, &kind, &state, &since, &s.Paused, &last, &latency, &s.Reason, &created); err != nil {
			return LiveState{}, classify(err)
		}
		s.Heartbeat, s.State, s.Since, s.Created = kind == 1, monitor.State(state), fromMicros(since), fromMicros(created)
		if last != 0 {
			s.LastAt = fromMicros(last)
		}
		s.Latency = time.Duration(latency) * time.Microsecond
		if latency < 0 {
			s.Latency = -1
		}
		return s, nil
	})
}
