package store

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
)

// grantCache keeps recent key grants in memory on PostgreSQL, sparing every
// authenticated request its first query. It is only trusted while a
// listener on the tocsin_auth channel is connected: triggers notify that
// channel on every change to keys, memberships or users (migration 0003),
// and each notification moves the epoch, which invalidates every entry. A
// revocation or demotion thus takes effect on every node within the
// notification's latency. Entries also expire after grantTTL, a backstop.
// SQLite does without: it is one node, its lookups are cheap, and the CLI
// changes its file from another process that could not notify.
//
// Unlike the rate-limit buckets (app/ratelimit.go) it stays beside the SQL:
// what invalidates it is the database's doing — the notifications, read on
// a connection of its own, and this store's writes to keys and
// memberships, which invalidate it before they return so that a node sees
// its own change at once — and its epoch must be taken before the read it
// guards (KeyGrantByHash).
type grantCache struct {
	epoch atomic.Uint64
	live  atomic.Bool
	// heard is the payload of the last notification taken: notifications
	// come in order, so one seen means every earlier one was taken too.
	heard atomic.Pointer[string]

	mu sync.RWMutex
	m  map[string]grantEntry

	stop context.CancelFunc
	done chan struct{}
}

type grantEntry struct {
	g     KeyGrant
	epoch uint64
	at    time.Time
}

const (
	grantTTL  = 10 * time.Second
	maxGrants = 10_000
	authChan  = "tocsin_auth"
)

func grantKey(hash []byte, workspaceID string) string {
	return string(hash) + "\x00" + workspaceID
}

func (c *grantCache) get(key string) (KeyGrant, bool) {
	if c == nil || !c.live.Load() {
		return KeyGrant{}, false
	}
	c.mu.RLock()
	e, ok := c.m[key]
	c.mu.RUnlock()
	if !ok || e.epoch != c.epoch.Load() || time.Since(e.at) > grantTTL {
		return KeyGrant{}, false
	}
	return e.g, true
}

// stamp is the epoch now, for a grant about to be read (put).
func (c *grantCache) stamp() uint64 {
	if c == nil {
		return 0
	}
	return c.epoch.Load()
}

// put stores a grant read after the epoch was observed as epoch; if
// anything changed since, the entry is born stale and never served.
func (c *grantCache) put(key string, g KeyGrant, epoch uint64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	if len(c.m) >= maxGrants {
		clear(c.m)
	}
	c.m[key] = grantEntry{g: g, epoch: epoch, at: time.Now()}
	c.mu.Unlock()
}

// invalidate drops every entry; called on notifications and by this
// process's own changes (which then need not wait for the notification).
func (c *grantCache) invalidate() {
	if c == nil {
		return
	}
	c.epoch.Add(1)
	c.mu.Lock()
	clear(c.m)
	c.mu.Unlock()
}

func startGrantCache(databaseURL string) *grantCache {
	ctx, cancel := context.WithCancel(context.Background())
	c := &grantCache{m: map[string]grantEntry{}, stop: cancel, done: make(chan struct{})}
	go c.listen(ctx, databaseURL)
	return c
}

// listen holds a LISTEN connection, reconnecting with backoff. While it is
// down the cache is not used at all.
func (c *grantCache) listen(ctx context.Context, databaseURL string) {
	defer close(c.done)
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := c.session(ctx, databaseURL)
		c.live.Store(false)
		c.invalidate()
		if ctx.Err() != nil {
			return
		}
		_ = err // the next attempt tells; requests meanwhile read the database
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

func (c *grantCache) session(ctx context.Context, databaseURL string) error {
	conn, err := pgx.Connect(ctx, databaseURL)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+authChan); err != nil {
		return err
	}
	// Whatever was cached before the listener was up may be stale.
	c.invalidate()
	c.live.Store(true)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		c.invalidate()
		c.heard.Store(&n.Payload)
	}
}

func (c *grantCache) close() {
	if c == nil {
		return
	}
	c.stop()
	<-c.done
}

// CachesGrants reports whether key grants are served from memory now (on
// PostgreSQL, while the change listener is connected).
func (db *DB) CachesGrants() bool { return db.grants != nil && db.grants.live.Load() }
