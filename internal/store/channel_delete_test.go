package store_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

// A channel is deleted while a sender records an attempt of one of its
// deliveries and brings the channel's others forward: the two lock the
// same deliveries in opposite orders. On PostgreSQL the database breaks
// the deadlock by aborting one of them; when it aborts the deletion
// (which waited first, so it usually is), the deletion must try again
// rather than fail the request.
// On SQLite the sender's transaction holds the write lock and the deletion
// waits for it. Either way the sender commits and the channel, its
// deliveries and their attempts are gone.
func TestDeleteChannelBesideSender(t *testing.T) {
	for _, e := range storetest.Engines(t) {
		t.Run(e.Name, func(t *testing.T) {
			ctx := context.Background()
			db := storetest.OpenDB(t, e)
			now := time.Now().UTC().Truncate(time.Second)
			w := newWorkspace("chan-delete")
			check(t, db.CreateWorkspace(ctx, w))
			c := notify.Channel{ID: ids.New(ids.Channel, now), WorkspaceID: w.ID, Name: "c", Kind: notify.Webhook, Enabled: true,
				Config: notify.Config{URL: "https://hooks.example.com/x"}, CreatedAt: now, UpdatedAt: now}
			check(t, db.CreateChannel(ctx, c, []byte("sealed"), 100))

			// Two pending deliveries of the channel, each waiting out a
			// failure: the first is the one the sender reports on, the
			// second the one it brings forward.
			us := now.UnixMicro()
			d := []string{"dlv_delete_1", "dlv_delete_2"}
			check(t, db.InSQLTx(ctx, func(tx *sql.Tx) error {
				for i, id := range d {
					ev := "evt_delete_" + id
					if _, err := tx.ExecContext(ctx, `INSERT INTO events (id, workspace_id, type, created_at, payload)
						VALUES ($1, $2, 'monitor.state_changed', $3, '{}')`, ev, w.ID, us); err != nil {
						return err
					}
					if _, err := tx.ExecContext(ctx, `INSERT INTO deliveries (id, workspace_id, channel_id, event_id, event_type,
						status, attempts, next_attempt_at, give_up_at, created_at, updated_at)
						VALUES ($1, $2, $3, $4, 'monitor.state_changed', 'pending', 1, $5, $6, $7, $7)`,
						id, w.ID, c.ID, ev, us+int64(i+1)*60e6, us+3600e6, us); err != nil {
						return err
					}
				}
				return nil
			}))

			senderHolds := make(chan struct{})
			deleted := make(chan error, 1)
			go func() {
				<-senderHolds
				deleted <- db.DeleteChannel(ctx, w.ID, c.ID)
			}()
			sent := db.InSQLTx(ctx, func(tx *sql.Tx) error {
				// The sender has brought the second delivery forward...
				if _, err := tx.ExecContext(ctx, `UPDATE deliveries SET next_attempt_at = $2 WHERE id = $1`, d[1], us); err != nil {
					return err
				}
				close(senderHolds)
				// ...and, once the deletion has taken the first and waits
				// for the second, records its attempt of the first. (On
				// SQLite nothing waits on a row: the order cannot deadlock.)
				if e.Name == store.EnginePostgres {
					wait.For(t, 10*time.Second, "the deletion to wait for a row lock", func() bool {
						var n int
						check(t, db.InSQLTx(ctx, func(q *sql.Tx) error {
							return q.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
								WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
						}))
						return n > 0
					})
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO delivery_attempts (delivery_id, n, node, started_at, duration_us, status_code, error)
					VALUES ($1, 2, 'node-a', $2, 1000, 503, 'the receiver answered 503')`, d[0], us); err != nil {
					return err
				}
				_, err := tx.ExecContext(ctx, `UPDATE deliveries SET attempts = attempts + 1 WHERE id = $1`, d[0])
				return err
			})
			// PostgreSQL checks for a deadlock once a waiter has waited a
			// second, so the sender may be the one it aborts: its attempt
			// is then tried again once its lease ends, and the deletion
			// goes through at once. Nothing else may fail it.
			if sent != nil && !strings.Contains(sent.Error(), "40P01") {
				t.Fatalf("the sender's transaction: %v", sent)
			}
			select {
			case err := <-deleted:
				check(t, err)
			case <-time.After(30 * time.Second):
				t.Fatal("the deletion did not end within 30 s of the sender's commit")
			}
			for _, id := range d {
				if _, err := db.GetDelivery(ctx, w.ID, id); !errors.Is(err, errs.ErrNotFound) {
					t.Errorf("delivery %s after its channel was deleted: %v", id, err)
				}
			}
			if _, _, err := db.GetChannel(ctx, w.ID, c.ID); !errors.Is(err, errs.ErrNotFound) {
				t.Errorf("the channel after its deletion: %v", err)
			}
		})
	}
}
