package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
)

// Objectives (slo_target and slo_period_days of monitors and heartbeats,
// both NULL for none) and the open burn-rate alert of each subject.

// sloCols receives the two nullable columns of an objective.
type sloCols struct {
	target sql.NullFloat64
	days   sql.NullInt64
}

func (c sloCols) value() *monitor.SLO {
	if !c.target.Valid || !c.days.Valid {
		return nil
	}
	return &monitor.SLO{Target: c.target.Float64, PeriodDays: int(c.days.Int64)}
}

// sloValues are the column values of s: NULLs for none.
func sloValues(s *monitor.SLO) (target, days any) {
	if s == nil {
		return nil, nil
	}
	return s.Target, s.PeriodDays
}

// SLOSubject is a monitor or heartbeat with an objective, as the
// burn-rate evaluation reads it.
type SLOSubject struct {
	ID, WorkspaceID, Name string
	CreatedAt             time.Time
	State                 monitor.State // now
	SLO                   monitor.SLO
}

// SLOSubjects returns up to limit monitors and heartbeats with an
// objective whose ids are after afterID, by id (heartbeats, hb_…, come
// before monitors, mon_…).
func (db *DB) SLOSubjects(ctx context.Context, afterID string, limit int) (out []SLOSubject, err error) {
	defer errs.Wrap(&err, "store.SLOSubjects")
	if limit <= 0 {
		return nil, errors.New("limit must be positive")
	}
	rows, err := db.r.QueryContext(ctx, `SELECT id, workspace_id, name, created_at, state, slo_target, slo_period_days FROM (
		SELECT m.id, m.workspace_id, m.name, m.created_at, r.state, m.slo_target, m.slo_period_days
			FROM monitors m JOIN monitor_runtime r ON r.monitor_id = m.id
			WHERE m.slo_target IS NOT NULL AND m.slo_period_days IS NOT NULL AND m.id > $1
		UNION ALL
		SELECT h.id, h.workspace_id, h.name, h.created_at, r.state, h.slo_target, h.slo_period_days
			FROM heartbeats h JOIN heartbeat_runtime r ON r.heartbeat_id = h.id
			WHERE h.slo_target IS NOT NULL AND h.slo_period_days IS NOT NULL AND h.id > $1
		) s ORDER BY id LIMIT $2`, afterID, limit)
	return collect(rows, err, func(r rowScanner) (SLOSubject, error) {
		var (
			s       SLOSubject
			created int64
		)
		if err := r.Scan(&s.ID, &s.WorkspaceID, &s.Name, &created, &s.State, &s.SLO.Target, &s.SLO.PeriodDays); err != nil {
			return SLOSubject{}, err
		}
		s.CreatedAt = fromMicros(created)
		return s, nil
	})
}

// SLOAlert is a subject's open burn-rate alert: the rule that fired and
// when.
type SLOAlert struct {
	SubjectID, WorkspaceID, Rule string
	OpenedAt                     time.Time
}

// SLOAlerts returns up to limit open alerts of subjects after afterID, by
// subject id.
func (db *DB) SLOAlerts(ctx context.Context, afterID string, limit int) (out []SLOAlert, err error) {
	defer errs.Wrap(&err, "store.SLOAlerts")
	if limit <= 0 {
		return nil, errors.New("limit must be positive")
	}
	rows, err := db.r.QueryContext(ctx, `SELECT subject_id, workspace_id, rule, opened_at FROM slo_alerts
		WHERE subject_id > $1 ORDER BY subject_id LIMIT $2`, afterID, limit)
	return collect(rows, err, func(r rowScanner) (SLOAlert, error) {
		var (
			a  SLOAlert
			at int64
		)
		if err := r.Scan(&a.SubjectID, &a.WorkspaceID, &a.Rule, &at); err != nil {
			return SLOAlert{}, err
		}
		a.OpenedAt = fromMicros(at)
		return a, nil
	})
}

// OpenSLOAlert records a's alert as open; false when its subject already
// has one (another node opened it first), so it is told once.
func (tx *Tx) OpenSLOAlert(ctx context.Context, a SLOAlert) (bool, error) {
	res, err := tx.c.ExecContext(ctx, `INSERT INTO slo_alerts (subject_id, workspace_id, rule, opened_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (subject_id) DO NOTHING`, a.SubjectID, a.WorkspaceID, a.Rule, micros(a.OpenedAt))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// CloseSLOAlert removes the subject's open alert as opened at openedAt;
// false when it is not there any more (another node closed it first).
func (tx *Tx) CloseSLOAlert(ctx context.Context, subjectID string, openedAt time.Time) (bool, error) {
	res, err := tx.c.ExecContext(ctx, `DELETE FROM slo_alerts WHERE subject_id = $1 AND opened_at = $2`,
		subjectID, micros(openedAt))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
