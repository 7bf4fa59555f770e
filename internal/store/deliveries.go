package store

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/notify"
)

// Deliveries: an event on its way to a channel. writeEvent makes one per
// channel that hears the event in the transaction that writes it; nodes
// claim due ones with a lease, send them, and record each attempt.
// Deliveries of one channel with the same order key (an incident, or the
// subject of a state change) go out one after the other, oldest first.

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

// ClaimDeliveries leases up to limit due deliveries to owner until
// now+lease; other nodes skip them until then (a dead node's come back
// when its lease ends).
func (db *DB) ClaimDeliveries(ctx context.Context, owner string, now time.Time, lease time.Duration, limit int) (out []Claimed, err error) {
	defer errs.Wrap(&err, "store.ClaimDeliveries")
	until := now.Add(lease)
	q := db.d.claim(claimDeliveries)
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, q, micros(now), owner, micros(until), limit)
		claimed, err := collect(rows, err, func(r rowScanner) (any, error) {
			id, err := scanValue[string](r)
			return id, err
		})
		if err != nil || len(claimed) == 0 {
			return err
		}
		if out, err = loadClaimed(ctx, tx, claimed, until); err != nil {
			return err
		}
		out, err = db.holdOverBound(ctx, tx, out, now)
		return err
	})
	return out, err
}

// loadClaimed reads the claimed deliveries with their events and
// channels.
func loadClaimed(ctx context.Context, tx *sql.Tx, claimed []any, until time.Time) ([]Claimed, error) {
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

// holdOverBound counts the first attempts of claimed deliveries against
// their channels' rate bounds (notify.RateBound), and holds the ones past
// it: held, they are done, and SummarizeHeld tells of them once the
// window ends. It returns the deliveries to send.
func (db *DB) holdOverBound(ctx context.Context, tx *sql.Tx, claimed []Claimed, now time.Time) ([]Claimed, error) {
	byChannel := map[string][]int{}
	var order []string
	for i, c := range claimed {
		if c.Attempts > 0 || c.HeldBy != "" || !notify.Bounded(c.EventType) { // retries, and held ones sent by hand, go
			continue
		}
		if _, ok := byChannel[c.ChannelID]; !ok {
			order = append(order, c.ChannelID)
		}
		byChannel[c.ChannelID] = append(byChannel[c.ChannelID], i)
	}
	held := map[int]bool{}
	for _, ch := range order {
		var start int64
		var count int
		if err := tx.QueryRowContext(ctx, `SELECT rate_window_start, rate_count FROM notification_channels WHERE id = $1`+db.d.forUpdate,
			ch).Scan(&start, &count); err != nil {
			return nil, err
		}
		if now.Sub(fromMicros(start)) >= notify.RateWindow {
			start, count = micros(now), 0
		}
		bound := notify.RateBound(claimed[byChannel[ch][0]].Channel.Kind)
		for _, i := range byChannel[ch] {
			if count >= bound {
				held[i] = true
				c := claimed[i]
				if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET status = 'held', last_error = $2, completed_at = $3, updated_at = $3,
					lease_owner = '', lease_until = 0 WHERE id = $1`, c.ID,
					"held back: the channel took its "+strconv.Itoa(bound)+" events of the minute; a summary follows", micros(now)); err != nil {
					return nil, err
				}
				continue
			}
			count++
		}
		if _, err := tx.ExecContext(ctx, `UPDATE notification_channels SET rate_window_start = $2, rate_count = $3 WHERE id = $1`,
			ch, start, count); err != nil {
			return nil, err
		}
	}
	if len(held) == 0 {
		return claimed, nil
	}
	send := claimed[:0:0]
	for i, c := range claimed {
		if !held[i] {
			send = append(send, c)
		}
	}
	return send, nil
}

// maxHeldTitles bounds the headlines a summary lists.
const maxHeldTitles = 50

// SummarizeHeld writes, for each channel whose rate window has ended with
// events held back, one notify.EventHeld event telling of them and its
// delivery to that channel, and marks the held ones as told (held_by).
// It reports how many summaries it wrote.
func (db *DB) SummarizeHeld(ctx context.Context, now time.Time) (n int, err error) {
	defer errs.Wrap(&err, "store.SummarizeHeld")
	rows, err := db.r.QueryContext(ctx, `SELECT DISTINCT d.channel_id FROM deliveries d JOIN notification_channels c ON c.id = d.channel_id
		WHERE d.status = 'held' AND d.held_by = '' AND c.rate_window_start <= $1`, micros(now.Add(-notify.RateWindow)))
	channels, err := collect(rows, err, scanValue[string])
	if err != nil {
		return 0, err
	}
	for _, ch := range channels {
		err := db.inTx(ctx, func(tx *sql.Tx) error {
			var wsID string
			if err := tx.QueryRowContext(ctx, `SELECT workspace_id FROM notification_channels WHERE id = $1`+db.d.forUpdate, ch).Scan(&wsID); err != nil {
				return err
			}
			rows, err := tx.QueryContext(ctx, `SELECT d.id, d.event_type, e.created_at, e.payload FROM deliveries d JOIN events e ON e.id = d.event_id
				WHERE d.channel_id = $1 AND d.status = 'held' AND d.held_by = '' ORDER BY d.seq`, ch)
			data := notify.HeldData{ChannelID: ch, ByType: map[string]int{}}
			var heldIDs []any
			err = each(rows, err, func(r rowScanner) error {
				var (
					id, typ, payload string
					at               int64
				)
				if err := r.Scan(&id, &typ, &at, &payload); err != nil {
					return err
				}
				if data.Count == 0 {
					data.From = fromMicros(at)
				}
				data.Count++
				data.ByType[typ]++
				data.To = fromMicros(at)
				if t := notify.HeldTitle([]byte(payload)); t != "" && len(data.Titles) < maxHeldTitles {
					data.Titles = append(data.Titles, t)
				}
				heldIDs = append(heldIDs, id)
				return nil
			})
			if err != nil || len(heldIDs) == 0 {
				return err // another node told of them
			}
			ev := incident.Event{ID: ids.New(ids.Event, now), Type: notify.EventHeld, CreatedAt: now, WorkspaceID: wsID, Data: data}
			t := &Tx{db: db, c: tx}
			if err := t.InsertEvent(ctx, ev, "", ""); err != nil {
				return err
			}
			summary, err := t.InsertDelivery(ctx, ev, ch, "", now.Add(notify.RetryHorizon))
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, `UPDATE deliveries SET held_by = $1 WHERE id IN (`+placeholders(2, len(heldIDs))+`)`,
				append([]any{summary}, heldIDs...)...)
			n++
			return err
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
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

// Outcome is how an attempt ended, for FinishDelivery.
type Outcome struct {
	Attempt notify.Attempt
	// Status is the delivery's status after it: Succeeded, Failed, or
	// Pending again with RetryAt.
	Status  notify.Status
	RetryAt time.Time
	// DisableChannel, when set, disables the channel with this reason
	// (410 Gone), and fails its other pending deliveries.
	DisableChannel string
}

// Finish is one attempt to record: at a delivery claimed under a lease
// until LeaseUntil, and how it ended.
type Finish struct {
	Delivery   *notify.Delivery
	LeaseUntil time.Time
	Outcome    Outcome
}

// FinishDeliveries records attempts made by owner, and each delivery's new
// status, in one transaction. A node whose lease ran out (another took the
// delivery over) records its attempt but changes nothing else; held says,
// for each, whether the node still held the lease.
func (db *DB) FinishDeliveries(ctx context.Context, owner string, fs []Finish) (held []bool, err error) {
	defer errs.Wrap(&err, "store.FinishDeliveries(%d)", len(fs))
	if err := db.prepareWrites(ctx, qNextAttemptN, qInsertAttempt, qFinish, qBringForward); err != nil {
		return nil, err
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		held = make([]bool, len(fs))
		for i, f := range fs {
			var err error
			if held[i], err = db.finish(ctx, tx, owner, f); err != nil {
				return err
			}
		}
		return nil
	})
	return held, err
}

// The statements of finish, prepared once (prepareWrites).
const (
	qNextAttemptN  = `SELECT COALESCE(MAX(n), 0) + 1 FROM delivery_attempts WHERE delivery_id = $1`
	qInsertAttempt = `INSERT INTO delivery_attempts (delivery_id, n, node, started_at, duration_us, status_code, error)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`
	qFinish = `UPDATE deliveries SET status = $4, attempts = attempts + 1, next_attempt_at = $5,
		last_status_code = $6, last_error = $7, completed_at = $8, updated_at = $9, lease_owner = '', lease_until = 0
		WHERE id = $1 AND lease_owner = $2 AND lease_until = $3 AND status = 'pending'`
	// The receiver answers again: what waited out its outage goes now,
	// instead of at each one's backoff.
	qBringForward = `UPDATE deliveries SET next_attempt_at = $2
		WHERE channel_id = $1 AND status = 'pending' AND attempts > 0 AND next_attempt_at > $2`
)

func (db *DB) finish(ctx context.Context, tx *sql.Tx, owner string, f Finish) (held bool, err error) {
	d, o, a := f.Delivery, f.Outcome, f.Outcome.Attempt
	now := a.StartedAt.Add(a.Duration)
	exec := func(query string, args ...any) (sql.Result, error) {
		st, err := db.txStmt(ctx, tx, query)
		if err != nil {
			return nil, err
		}
		return st.ExecContext(ctx, args...)
	}
	st, err := db.txStmt(ctx, tx, qNextAttemptN)
	if err != nil {
		return false, err
	}
	var n int
	if err := st.QueryRowContext(ctx, d.ID).Scan(&n); err != nil {
		return false, err
	}
	if _, err := exec(qInsertAttempt, d.ID, n, a.Node, micros(a.StartedAt), a.Duration.Microseconds(), a.StatusCode, a.Error); err != nil {
		return false, err
	}
	completed, next := micros(now), micros(d.NextAttemptAt)
	if o.Status == notify.Pending {
		completed, next = 0, micros(o.RetryAt)
	}
	res, err := exec(qFinish, d.ID, owner, micros(f.LeaseUntil), string(o.Status), next, a.StatusCode, a.Error, completed, micros(now))
	if err != nil {
		return false, err
	}
	if rows, err := res.RowsAffected(); err != nil || rows == 0 {
		return false, err
	}
	switch {
	case o.DisableChannel != "":
		if _, err := exec(`UPDATE notification_channels SET enabled = $2, disabled_reason = $3, updated_at = $4
			WHERE id = $1`, d.ChannelID, false, o.DisableChannel, micros(now)); err != nil {
			return true, err
		}
		_, err = exec(`UPDATE deliveries SET status = 'failed', last_error = $2, completed_at = $3, updated_at = $3
			WHERE channel_id = $1 AND status = 'pending'`, d.ChannelID, "channel disabled: "+o.DisableChannel, micros(now))
	case o.Status == notify.Succeeded:
		_, err = exec(qBringForward, d.ChannelID, micros(now))
	}
	return true, err
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
// that handled it see a duplicate): pending at now, retried for another
// RetryHorizon. A held one keeps its summary (held_by), which also spares
// it the rate bound: a person asked for it.
func (db *DB) Redeliver(ctx context.Context, wsID, id string, now time.Time) (err error) {
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
			updated_at = $2, lease_owner = '', lease_until = 0 WHERE id = $1`, id, micros(now), micros(now.Add(notify.RetryHorizon)))
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
