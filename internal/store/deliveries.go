package store

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/notify"
)

// Deliveries: an event on its way to a channel. app's workflow makes one
// per channel that hears the event (Tx.InsertDelivery) in the transaction
// that writes it; nodes claim due ones with a lease, send them, and record
// each attempt, in transactions app runs over these primitives, which
// decide nothing (the rate bound, what an attempt leaves, the retry
// horizon are app's). Deliveries of one channel with the same order key
// (an incident, or the subject of a state change) go out one after the
// other, oldest first.

// SendTest writes a test event for one channel of the workspace and its
// delivery, whatever the channel's filters; it returns the delivery's id.
func (db *DB) SendTest(ctx context.Context, wsID, channelID string, ev incident.Event, giveUpAt time.Time) (id string, err error) {
	defer errs.Wrap(&err, "store.SendTest(%s)", channelID)
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT id FROM notification_channels WHERE workspace_id = $1 AND id = $2`+db.d.forUpdate,
			wsID, channelID).Scan(new(string)); err != nil {
			return classify(err)
		}
		t := &Tx{db: db, c: tx}
		if err := t.InsertEvent(ctx, ev, "", ""); err != nil {
			return err
		}
		id, err = t.InsertDelivery(ctx, ev, channelID, "", giveUpAt)
		return err
	})
	return id, err
}

// deliveryDue is the condition of a delivery that may be claimed at $1:
// pending, due, not leased, and first of its order key on its channel.
const deliveryDue = `d.status = 'pending' AND d.next_attempt_at <= $1 AND d.lease_until < $1
	AND (d.order_key = '' OR NOT EXISTS (SELECT 1 FROM deliveries e WHERE e.channel_id = d.channel_id
		AND e.order_key = d.order_key AND e.status = 'pending' AND e.seq < d.seq))`

// DeliveriesDue reports whether a delivery can be claimed at now: a
// read, so that idle polling takes no write lock.
func (db *DB) DeliveriesDue(ctx context.Context, now time.Time) (due bool, err error) {
	defer errs.Wrap(&err, "store.DeliveriesDue")
	err = db.r.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM deliveries d WHERE `+deliveryDue+`)`, micros(now)).Scan(&due)
	return due, err
}

// Claimed is a delivery leased to one node: what it needs to send it.
type Claimed struct {
	notify.Delivery
	Channel    notify.Channel
	Sealed     []byte // the channel's secrets
	Payload    []byte // the event as stored
	LeaseUntil time.Time
}

// ClaimDeliveries leases up to limit deliveries due at now to owner until
// until, and reads them with their events and channels; other nodes skip
// them until then (a dead node's come back when its lease ends).
func (tx *Tx) ClaimDeliveries(ctx context.Context, owner string, now, until time.Time, limit int) ([]Claimed, error) {
	q := tx.db.d.claims.deliveries
	rows, err := tx.c.QueryContext(ctx, q, micros(now), owner, micros(until), limit)
	claimed, err := collect(rows, err, func(r rowScanner) (any, error) {
		id, err := scanValue[string](r)
		return id, err
	})
	if err != nil || len(claimed) == 0 {
		return nil, err
	}
	return loadClaimed(ctx, tx.c, claimed, until)
}

// loadClaimed reads the claimed deliveries with their events and
// channels.
func loadClaimed(ctx context.Context, tx queryer, claimed []any, until time.Time) ([]Claimed, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+deliveryColumns+`, e.payload FROM deliveries d JOIN events e ON e.id = d.event_id
		WHERE d.id IN (`+placeholders(1, len(claimed))+`) ORDER BY d.seq`, claimed...)
	out, err := collect(rows, err, func(r rowScanner) (Claimed, error) {
		var payload string
		d, err := scanDelivery(r, &payload)
		if err != nil {
			return Claimed{}, err
		}
		return Claimed{Delivery: *d, Payload: []byte(payload), LeaseUntil: until}, nil
	})
	if err != nil {
		return nil, err
	}
	var (
		channels = map[string]StoredChannel{}
		chIDs    []any
	)
	for _, c := range out {
		if _, ok := channels[c.ChannelID]; !ok {
			channels[c.ChannelID] = StoredChannel{}
			chIDs = append(chIDs, c.ChannelID)
		}
	}
	found, err := queryStoredChannels(ctx, tx, `SELECT `+channelColumns+`, secrets_sealed FROM notification_channels
		WHERE id IN (`+placeholders(1, len(chIDs))+`)`, chIDs...)
	if err != nil {
		return nil, err
	}
	for _, sc := range found {
		channels[sc.ID] = sc
	}
	for i := range out {
		c := channels[out[i].ChannelID]
		out[i].Channel, out[i].Sealed = c.Channel, c.Sealed
	}
	return out, nil
}

// RateWindow reads the channel's rate window, the start of the current
// one and the first attempts counted in it, and locks the channel's row
// until the transaction ends.
func (tx *Tx) RateWindow(ctx context.Context, channelID string) (start time.Time, count int, err error) {
	var us int64
	err = tx.c.QueryRowContext(ctx, `SELECT rate_window_start, rate_count FROM notification_channels WHERE id = $1`+tx.db.d.forUpdate,
		channelID).Scan(&us, &count)
	return fromMicros(us), count, err
}

// SetRateWindow stores the channel's rate window.
func (tx *Tx) SetRateWindow(ctx context.Context, channelID string, start time.Time, count int) error {
	_, err := tx.c.ExecContext(ctx, `UPDATE notification_channels SET rate_window_start = $2, rate_count = $3 WHERE id = $1`,
		channelID, micros(start), count)
	return err
}

// HoldDelivery ends the claimed delivery id as held at now, saying why:
// done without an attempt, until a summary tells of it.
func (tx *Tx) HoldDelivery(ctx context.Context, id, reason string, now time.Time) error {
	_, err := tx.c.ExecContext(ctx, `UPDATE deliveries SET status = 'held', last_error = $2, completed_at = $3, updated_at = $3,
		lease_owner = '', lease_until = 0 WHERE id = $1`, id, reason, micros(now))
	return err
}

// ChannelsWithUntoldHeld lists the channels with held deliveries no
// summary has told of yet, whose rate window started at or before
// windowStart: a read, so that idle polling takes no write lock.
func (db *DB) ChannelsWithUntoldHeld(ctx context.Context, windowStart time.Time) (ids []string, err error) {
	defer errs.Wrap(&err, "store.ChannelsWithUntoldHeld")
	rows, err := db.r.QueryContext(ctx, `SELECT DISTINCT d.channel_id FROM deliveries d JOIN notification_channels c ON c.id = d.channel_id
		WHERE d.status = 'held' AND d.held_by = '' AND c.rate_window_start <= $1`, micros(windowStart))
	return collect(rows, err, scanValue[string])
}

// LockChannel locks the channel's row until the transaction ends, and
// returns its workspace.
func (tx *Tx) LockChannel(ctx context.Context, channelID string) (wsID string, err error) {
	err = tx.c.QueryRowContext(ctx, `SELECT workspace_id FROM notification_channels WHERE id = $1`+tx.db.d.forUpdate,
		channelID).Scan(&wsID)
	return wsID, err
}

// HeldDelivery is a held delivery no summary has told of yet, with its
// event.
type HeldDelivery struct {
	ID        string
	EventType string
	CreatedAt time.Time // the event's
	Payload   []byte    // the event as stored
}

// UntoldHeld lists the channel's held deliveries no summary has told of
// yet, oldest first.
func (tx *Tx) UntoldHeld(ctx context.Context, channelID string) ([]HeldDelivery, error) {
	rows, err := tx.c.QueryContext(ctx, `SELECT d.id, d.event_type, e.created_at, e.payload FROM deliveries d JOIN events e ON e.id = d.event_id
		WHERE d.channel_id = $1 AND d.status = 'held' AND d.held_by = '' ORDER BY d.seq`, channelID)
	return collect(rows, err, func(r rowScanner) (h HeldDelivery, err error) {
		var (
			payload string
			at      int64
		)
		err = r.Scan(&h.ID, &h.EventType, &at, &payload)
		h.CreatedAt, h.Payload = fromMicros(at), []byte(payload)
		return h, err
	})
}

// MarkHeldTold records that the delivery summaryID tells of the held
// deliveries ids (held_by).
func (tx *Tx) MarkHeldTold(ctx context.Context, summaryID string, ids []string) error {
	args := make([]any, 0, len(ids)+1)
	args = append(args, summaryID)
	for _, id := range ids {
		args = append(args, id)
	}
	_, err := tx.c.ExecContext(ctx, `UPDATE deliveries SET held_by = $1 WHERE id IN (`+placeholders(2, len(ids))+`)`, args...)
	return err
}

const deliveryColumns = `d.id, d.workspace_id, d.channel_id, d.event_id, d.event_type, d.status, d.attempts,
	d.next_attempt_at, d.give_up_at, d.last_status_code, d.last_error, d.held_by, d.created_at, d.updated_at, d.completed_at`

func scanDelivery(r rowScanner, extra ...any) (*notify.Delivery, error) {
	var (
		d                               = &notify.Delivery{Log: []notify.Attempt{}}
		status                          string
		next, giveUp, cr, up, completed int64
	)
	if err := r.Scan(append([]any{&d.ID, &d.WorkspaceID, &d.ChannelID, &d.EventID, &d.EventType, &status, &d.Attempts,
		&next, &giveUp, &d.LastStatusCode, &d.LastError, &d.HeldBy, &cr, &up, &completed}, extra...)...); err != nil {
		return nil, err
	}
	d.Status = notify.Status(status)
	d.NextAttemptAt, d.GiveUpAt = fromMicros(next), fromMicros(giveUp)
	d.CreatedAt, d.UpdatedAt = fromMicros(cr), fromMicros(up)
	if completed != 0 {
		d.CompletedAt = fromMicros(completed)
	}
	return d, nil
}

// ReleaseDeliveries gives up the leases owner holds: a node that starts
// has nothing in flight, so what its previous process claimed can go at
// once instead of when the leases run out.
func (db *DB) ReleaseDeliveries(ctx context.Context, owner string) (n int64, err error) {
	defer errs.Wrap(&err, "store.ReleaseDeliveries(%s)", owner)
	res, err := db.w.ExecContext(ctx, `UPDATE deliveries SET lease_owner = '', lease_until = 0
		WHERE lease_owner = $1 AND status = 'pending'`, owner)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// PrepareAttemptWrites caches the statements of recording attempts
// (RecordAttempt, FinishDelivery, BringForward) for the transactions to
// come; call it outside any transaction.
func (db *DB) PrepareAttemptWrites(ctx context.Context) error {
	return db.prepareWrites(ctx, qNextAttemptN, qInsertAttempt, qFinish, qBringForward)
}

// The statements of recording attempts, prepared once
// (PrepareAttemptWrites).
const (
	qNextAttemptN  = `SELECT COALESCE(MAX(n), 0) + 1 FROM delivery_attempts WHERE delivery_id = $1`
	qInsertAttempt = `INSERT INTO delivery_attempts (delivery_id, n, node, started_at, duration_us, status_code, error)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`
	qFinish = `UPDATE deliveries SET status = $4, attempts = attempts + 1, next_attempt_at = $5,
		last_status_code = $6, last_error = $7, completed_at = $8, updated_at = $9, lease_owner = '', lease_until = 0
		WHERE id = $1 AND lease_owner = $2 AND lease_until = $3 AND status = 'pending'`
	qBringForward = `UPDATE deliveries SET next_attempt_at = $2
		WHERE channel_id = $1 AND status = 'pending' AND attempts > 0 AND next_attempt_at > $2`
)

// stmt returns query as a statement of the transaction: the prepared one
// if the store cached it.
func (tx *Tx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	c, ok := tx.c.(*sql.Tx)
	if !ok {
		return nil, errors.New("store: a prepared statement outside a *sql.Tx")
	}
	return tx.db.txStmt(ctx, c, query)
}

func (tx *Tx) execStmt(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := tx.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}

// RecordAttempt adds a to the attempts of the delivery id, numbered after
// the last.
func (tx *Tx) RecordAttempt(ctx context.Context, id string, a notify.Attempt) error {
	st, err := tx.stmt(ctx, qNextAttemptN)
	if err != nil {
		return err
	}
	var n int
	if err := st.QueryRowContext(ctx, id).Scan(&n); err != nil {
		return err
	}
	_, err = tx.execStmt(ctx, qInsertAttempt, id, n, a.Node, micros(a.StartedAt), a.Duration.Microseconds(), a.StatusCode, a.Error)
	return err
}

// DeliveryState is what an attempt leaves on its delivery.
type DeliveryState struct {
	Status        notify.Status
	NextAttemptAt time.Time
	StatusCode    int
	Error         string
	CompletedAt   time.Time // zero while pending
	UpdatedAt     time.Time
}

// FinishDelivery writes s on the delivery id, counting one more attempt,
// if owner still holds its lease until leaseUntil (held); a node whose
// lease ran out changes nothing.
func (tx *Tx) FinishDelivery(ctx context.Context, id, owner string, leaseUntil time.Time, s DeliveryState) (held bool, err error) {
	var completed int64
	if !s.CompletedAt.IsZero() {
		completed = micros(s.CompletedAt)
	}
	res, err := tx.execStmt(ctx, qFinish, id, owner, micros(leaseUntil), string(s.Status), micros(s.NextAttemptAt),
		s.StatusCode, s.Error, completed, micros(s.UpdatedAt))
	if err != nil {
		return false, err
	}
	rows, err := res.RowsAffected()
	return rows > 0, err
}

// DisableChannel disables the channel at now with reason, and fails its
// pending deliveries with lastError.
func (tx *Tx) DisableChannel(ctx context.Context, channelID, reason, lastError string, now time.Time) error {
	if _, err := tx.execStmt(ctx, `UPDATE notification_channels SET enabled = $2, disabled_reason = $3, updated_at = $4
		WHERE id = $1`, channelID, false, reason, micros(now)); err != nil {
		return err
	}
	_, err := tx.execStmt(ctx, `UPDATE deliveries SET status = 'failed', last_error = $2, completed_at = $3, updated_at = $3
		WHERE channel_id = $1 AND status = 'pending'`, channelID, lastError, micros(now))
	return err
}

// BringForward makes the channel's pending retries due at now.
func (tx *Tx) BringForward(ctx context.Context, channelID string, now time.Time) error {
	_, err := tx.execStmt(ctx, qBringForward, channelID, micros(now))
	return err
}

// FailUnsendable ends a claimed delivery that cannot be sent (its channel
// disabled, its secrets unreadable) without an attempt.
func (db *DB) FailUnsendable(ctx context.Context, owner string, leaseUntil time.Time, id, reason string, now time.Time) (err error) {
	defer errs.Wrap(&err, "store.FailUnsendable(%s)", id)
	_, err = db.w.ExecContext(ctx, `UPDATE deliveries SET status = 'failed', last_error = $4, completed_at = $5, updated_at = $5,
		lease_owner = '', lease_until = 0 WHERE id = $1 AND lease_owner = $2 AND lease_until = $3 AND status = 'pending'`,
		id, owner, micros(leaseUntil), reason, micros(now))
	return err
}

// DeliveryQuery pages ListDeliveries.
type DeliveryQuery struct {
	ChannelID string
	Status    string // "" for all
	BeforeID  string // the page after this id, newest first
	Limit     int
}

// ListDeliveries returns a channel's deliveries, newest first, each with
// its attempts.
func (db *DB) ListDeliveries(ctx context.Context, wsID string, q DeliveryQuery) (out []*notify.Delivery, err error) {
	defer errs.Wrap(&err, "store.ListDeliveries(%s)", q.ChannelID)
	args := []any{wsID, q.ChannelID}
	where := `d.workspace_id = $1 AND d.channel_id = $2`
	if q.Status != "" {
		args = append(args, q.Status)
		where += ` AND d.status = $3`
	}
	if q.BeforeID != "" {
		args = append(args, q.BeforeID)
		where += ` AND d.id < $` + strconv.Itoa(len(args))
	}
	args = append(args, max(q.Limit, 1))
	err = db.inSnapshot(ctx, func(tx *sql.Tx) error {
		out, err = queryDeliveries(ctx, tx, `SELECT `+deliveryColumns+` FROM deliveries d WHERE `+where+
			` ORDER BY d.id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
		return err
	})
	return out, err
}

// LatestDeliveries returns the newest delivery of each of the
// workspace's channels named, with its attempts, by channel id; a
// channel without one, or of another workspace, is absent.
func (db *DB) LatestDeliveries(ctx context.Context, wsID string, channelIDs []string) (out map[string]*notify.Delivery, err error) {
	defer errs.Wrap(&err, "store.LatestDeliveries")
	out = make(map[string]*notify.Delivery, len(channelIDs))
	if len(channelIDs) == 0 {
		return out, nil
	}
	args := []any{wsID}
	for _, id := range channelIDs {
		args = append(args, id)
	}
	err = db.inSnapshot(ctx, func(tx *sql.Tx) error {
		ds, err := queryDeliveries(ctx, tx, `SELECT `+deliveryColumns+` FROM deliveries d WHERE d.workspace_id = $1 AND d.id IN (
			SELECT MAX(id) FROM deliveries WHERE workspace_id = $1 AND channel_id IN (`+placeholders(2, len(channelIDs))+`) GROUP BY channel_id)`, args...)
		for _, d := range ds {
			out[d.ChannelID] = d
		}
		return err
	})
	return out, err
}

// GetDelivery returns the workspace's delivery id with its attempts.
func (db *DB) GetDelivery(ctx context.Context, wsID, id string) (d *notify.Delivery, err error) {
	defer errs.Wrap(&err, "store.GetDelivery(%s)", id)
	err = db.inSnapshot(ctx, func(tx *sql.Tx) error {
		ds, err := queryDeliveries(ctx, tx, `SELECT `+deliveryColumns+` FROM deliveries d WHERE d.workspace_id = $1 AND d.id = $2`, wsID, id)
		if err != nil {
			return err
		}
		if len(ds) == 0 {
			return errs.ErrNotFound
		}
		d = ds[0]
		return nil
	})
	return d, err
}

// maxListedAttempts bounds the attempts shown with a delivery: the latest.
const maxListedAttempts = 50

func queryDeliveries(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]*notify.Delivery, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	out, err := collect(rows, err, func(r rowScanner) (*notify.Delivery, error) { return scanDelivery(r) })
	if err != nil || len(out) == 0 {
		return out, err
	}
	byID := make(map[string]*notify.Delivery, len(out))
	idArgs := make([]any, len(out))
	for i, d := range out {
		byID[d.ID], idArgs[i] = d, d.ID
	}
	rows, err = tx.QueryContext(ctx, `SELECT delivery_id, n, node, started_at, duration_us, status_code, error FROM delivery_attempts
		WHERE delivery_id IN (`+placeholders(1, len(out))+`) ORDER BY delivery_id, n`, idArgs...)
	err = each(rows, err, func(r rowScanner) error {
		var (
			id        string
			a         notify.Attempt
			start, us int64
		)
		if err := r.Scan(&id, &a.N, &a.Node, &start, &us, &a.StatusCode, &a.Error); err != nil {
			return err
		}
		a.StartedAt, a.Duration = fromMicros(start), time.Duration(us)*time.Microsecond
		d := byID[id]
		d.Log = append(d.Log, a)
		if len(d.Log) > maxListedAttempts {
			d.Log = d.Log[1:]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Redeliver sends a finished delivery again, with the same id (receivers
// that handled it see a duplicate): pending at now, retried until
// giveUpAt. A held one keeps its summary (held_by), which also spares it
// the rate bound: a person asked for it.
func (db *DB) Redeliver(ctx context.Context, wsID, id string, now, giveUpAt time.Time) (err error) {
	defer errs.Wrap(&err, "store.Redeliver(%s)", id)
	return db.inTx(ctx, func(tx *sql.Tx) error {
		var status string
		var enabled bool
		if err := tx.QueryRowContext(ctx, `SELECT d.status, c.enabled FROM deliveries d JOIN notification_channels c ON c.id = d.channel_id
			WHERE d.workspace_id = $1 AND d.id = $2`, wsID, id).Scan(&status, &enabled); err != nil {
			return classify(err)
		}
		switch {
		case status == string(notify.Pending):
			return &errs.Error{Kind: errs.KindConflict, Message: "the delivery is still pending: it will be tried again by itself"}
		case !enabled:
			return &errs.Error{Kind: errs.KindConflict, Message: "the delivery's channel is disabled: enable it first"}
		}
		_, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'pending', next_attempt_at = $2, give_up_at = $3, completed_at = 0,
			updated_at = $2, lease_owner = '', lease_until = 0 WHERE id = $1`, id, micros(now), micros(giveUpAt))
		return err
	})
}

// DeleteEventsBefore forgets events written before cutoff, with their
// deliveries and attempts, a batch at a time; an event with a delivery
// still pending stays.
func (db *DB) DeleteEventsBefore(ctx context.Context, cutoff time.Time) (deleted int64, err error) {
	defer errs.Wrap(&err, "store.DeleteEventsBefore")
	for {
		res, err := db.w.ExecContext(ctx, `DELETE FROM events WHERE seq IN (SELECT seq FROM events e WHERE e.created_at < $1
			AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status = 'pending') ORDER BY seq LIMIT 1000)`,
			micros(cutoff))
		if err != nil {
			return deleted, err
		}
		n, err := res.RowsAffected()
		deleted += n
		if err != nil || n < 1000 {
			return deleted, err
		}
	}
}
