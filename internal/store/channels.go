package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/notify"
)

// Notification channels. The store keeps their secrets sealed (the app
// seals and opens them); it checks that the subjects a channel hears are
// its workspace's.

const channelColumns = `id, workspace_id, name, kind, enabled, config, events, subjects, disabled_reason, created_at, updated_at`

func scanChannel(r rowScanner, extra ...any) (notify.Channel, error) {
	var (
		c                        notify.Channel
		kind                     string
		config, events, subjects string
		cr, up                   int64
	)
	dest := append([]any{&c.ID, &c.WorkspaceID, &c.Name, &kind, &c.Enabled, &config, &events, &subjects,
		&c.DisabledReason, &cr, &up}, extra...)
	if err := r.Scan(dest...); err != nil {
		return c, err
	}
	c.Kind, c.CreatedAt, c.UpdatedAt = notify.Kind(kind), fromMicros(cr), fromMicros(up)
	for _, f := range []struct {
		raw string
		to  any
	}{{config, &c.Config}, {events, &c.Events}, {subjects, &c.Subjects}} {
		if err := json.Unmarshal([]byte(f.raw), f.to); err != nil {
			return c, err
		}
	}
	return c, nil
}

func channelJSON(c notify.Channel) (config, events, subjects string, err error) {
	var b [3][]byte
	for i, v := range []any{c.Config, nonNil(c.Events), nonNil(c.Subjects)} {
		if b[i], err = json.Marshal(v); err != nil {
			return "", "", "", err
		}
	}
	return string(b[0]), string(b[1]), string(b[2]), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// CreateChannel stores a new channel with its sealed secrets, within the
// workspace's quota: its override, else maxChannels (ErrQuota).
func (db *DB) CreateChannel(ctx context.Context, c notify.Channel, sealed []byte, maxChannels int) (err error) {
	defer errs.Wrap(&err, "store.CreateChannel(%s)", c.ID)
	config, events, subjects, err := channelJSON(c)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.withinQuota(ctx, tx, c.WorkspaceID, quotaChannels, maxChannels); err != nil {
			return err
		}
		if err := db.checkAffected(ctx, tx, c.WorkspaceID, c.Subjects); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO notification_channels (id, workspace_id, name, kind, enabled, config, events,
			subjects, secrets_sealed, disabled_reason, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
			c.ID, c.WorkspaceID, c.Name, string(c.Kind), c.Enabled, config, events, subjects, sealed, c.DisabledReason,
			micros(c.CreatedAt), micros(c.UpdatedAt))
		return err
	})
}

// GetChannel returns the workspace's channel with its sealed secrets.
func (db *DB) GetChannel(ctx context.Context, wsID, id string) (c notify.Channel, sealed []byte, err error) {
	defer errs.Wrap(&err, "store.GetChannel(%s)", id)
	c, err = scanChannel(db.r.QueryRowContext(ctx, `SELECT `+channelColumns+`, secrets_sealed FROM notification_channels
		WHERE workspace_id = $1 AND id = $2`, wsID, id), &sealed)
	return c, sealed, classify(err)
}

// StoredChannel is a channel with its sealed secrets.
type StoredChannel struct {
	notify.Channel
	Sealed []byte
}

// ListChannels returns the workspace's channels after the id after, in
// creation order.
func (db *DB) ListChannels(ctx context.Context, wsID, after string, limit int) (out []StoredChannel, err error) {
	defer errs.Wrap(&err, "store.ListChannels")
	return queryStoredChannels(ctx, db.r, `SELECT `+channelColumns+`, secrets_sealed FROM notification_channels
		WHERE workspace_id = $1 AND id > $2 ORDER BY id LIMIT $3`, wsID, after, limit)
}

// ChannelsWithURLQuery returns up to limit channels of every workspace,
// with ids after afterID, whose config may hold a URL with a query in
// plaintext (as stored before queries were sealed), by id.
func (db *DB) ChannelsWithURLQuery(ctx context.Context, afterID string, limit int) (out []StoredChannel, err error) {
	defer errs.Wrap(&err, "store.ChannelsWithURLQuery")
	return queryStoredChannels(ctx, db.w, `SELECT `+channelColumns+`, secrets_sealed FROM notification_channels
		WHERE id > $1 AND config LIKE $2 ORDER BY id LIMIT $3`, afterID, `%?%`, limit)
}

// queryStoredChannels reads the channels query selects (channelColumns,
// then secrets_sealed) with their sealed secrets.
func queryStoredChannels(ctx context.Context, q queryer, query string, args ...any) ([]StoredChannel, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	return collect(rows, err, func(r rowScanner) (sc StoredChannel, err error) {
		sc.Channel, err = scanChannel(r, &sc.Sealed)
		return sc, err
	})
}

// CountChannels counts the workspace's channels.
func (db *DB) CountChannels(ctx context.Context, wsID string) (n int, err error) {
	defer errs.Wrap(&err, "store.CountChannels")
	err = db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM notification_channels WHERE workspace_id = $1`, wsID).Scan(&n)
	return n, err
}

// UpdateChannel writes c, and its sealed secrets unless sealed is nil, if
// the stored version is still prev (ErrStale otherwise).
func (db *DB) UpdateChannel(ctx context.Context, c notify.Channel, sealed []byte, prev time.Time) (err error) {
	defer errs.Wrap(&err, "store.UpdateChannel(%s)", c.ID)
	config, events, subjects, err := channelJSON(c)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.checkAffected(ctx, tx, c.WorkspaceID, c.Subjects); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE notification_channels SET name = $3, enabled = $4, config = $5, events = $6,
			subjects = $7, secrets_sealed = COALESCE($8, secrets_sealed), disabled_reason = $9, updated_at = $10
			WHERE workspace_id = $1 AND id = $2 AND updated_at = $11`,
			c.WorkspaceID, c.ID, c.Name, c.Enabled, config, events, subjects, nullBytes(sealed), c.DisabledReason,
			micros(c.UpdatedAt), micros(prev))
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var exists string
		if err := tx.QueryRowContext(ctx, `SELECT id FROM notification_channels WHERE workspace_id = $1 AND id = $2`,
			c.WorkspaceID, c.ID).Scan(&exists); err != nil {
			return classify(err)
		}
		return ErrStale
	})
}

// DeleteChannel removes the workspace's channel.
func (db *DB) DeleteChannel(ctx context.Context, wsID, id string) (err error) {
	defer errs.Wrap(&err, "store.DeleteChannel(%s)", id)
	// The deletion takes the channel's deliveries and their attempts with
	// it, row by row, while a sender may be recording an attempt and
	// bringing the channel's other deliveries forward, taking the same rows
	// in another order: PostgreSQL may abort one of the two, and the
	// deletion tries again.
	return againIfLost(func() error {
		return oneRow(db.w.ExecContext(ctx, `DELETE FROM notification_channels WHERE workspace_id = $1 AND id = $2`, wsID, id))
	})
}
