package store

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
)

// SubjectState is what a status page shows of one monitor or heartbeat:
// its state now and when it was made.
type SubjectState struct {
	State   monitor.State
	Created time.Time
}

// SubjectStates returns the state of each monitor and heartbeat of
// subjectIDs that exists in the workspace wsID, in one query per chunk of
// ids: a status page reads all its components at once.
func (db *DB) SubjectStates(ctx context.Context, wsID string, subjectIDs []string) (out map[string]SubjectState, err error) {
	defer errs.Wrap(&err, "store.SubjectStates(%s, %d)", wsID, len(subjectIDs))
	// A heartbeat's state may still be in the SQLite ping journal.
	if slices.ContainsFunc(subjectIDs, func(id string) bool { return strings.HasPrefix(id, ids.Heartbeat+"_") }) {
		if err := db.flushPings(ctx); err != nil {
			return nil, err
		}
	}
	out = make(map[string]SubjectState, len(subjectIDs))
	for start := 0; start < len(subjectIDs); start += seqChunk {
		part := subjectIDs[start:min(start+seqChunk, len(subjectIDs))]
		args := make([]any, 0, len(part)+1)
		args = append(args, wsID)
		for _, id := range part {
			args = append(args, id)
		}
		in := placeholders(2, len(part))
		rows, err := db.r.QueryContext(ctx, `SELECT m.id, r.state, m.created_at FROM monitors m
				JOIN monitor_runtime r ON r.monitor_id = m.id
				WHERE m.workspace_id = $1 AND m.id IN (`+in+`)
			UNION ALL
			SELECT h.id, r.state, h.created_at FROM heartbeats h
				JOIN heartbeat_runtime r ON r.heartbeat_id = h.id
				WHERE h.workspace_id = $1 AND h.id IN (`+in+`)`, args...)
		err = each(rows, err, func(r rowScanner) error {
			var (
				id, state string
				created   int64
			)
			if err := r.Scan(&id, &state, &created); err != nil {
				return err
			}
			out[id] = SubjectState{State: monitor.State(state), Created: fromMicros(created)}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
