package checks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // driver "pgx" for CREATE/DROP DATABASE

	"github.com/tocsin/tocsin/bench/internal/pgfresh"
	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// perWorkspace is how many monitors go in one workspace: the default
// quota, so the monitors look like a set of ordinary tenants.
const perWorkspace = 1000

// newTargets makes the monitors' ids and URLs once, so every run checks
// the same monitors on the same slots.
func newTargets(n int, base string) []benchTarget {
	now := time.Now().UTC()
	ts := make([]benchTarget, n)
	for i := range ts {
		ts[i] = benchTarget{ID: ids.New(ids.Monitor, now), URL: targetURL(base, i)}
	}
	return ts
}

// freshDatabase makes an empty database for one run and returns its URL
// and how to remove it.
func (b *bench) freshDatabase(ctx context.Context, engine string) (dbURL string, drop func(), err error) {
	if engine == "sqlite" {
		path := filepath.Join(b.Dir, "sqlite", "tocsin.db")
		drop = func() {
			if !b.c.keep {
				os.RemoveAll(filepath.Dir(path))
			}
		}
		return "sqlite:" + path, drop, nil
	}
	return pgfresh.Create(ctx, b.c.pgURL, pgfresh.Name("tocsin_checkbench", 0), b.c.keep, b.Logf)
}

func sqlitePath(dbURL string) string {
	for _, p := range []string{"sqlite://", "sqlite:"} {
		if rest, ok := strings.CutPrefix(dbURL, p); ok {
			return rest
		}
	}
	return dbURL
}

// createMonitors migrates the database and stores the monitors through the
// store, as the API would (checked every interval, the default thresholds
// and timeout), in workspaces of perWorkspace, several workspaces at once.
func (b *bench) createMonitors(ctx context.Context, dbURL string, ts []benchTarget) error {
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
		sem  = make(chan struct{}, 8)
	)
	for w := 0; w*perWorkspace < len(ts); w++ {
		part := ts[w*perWorkspace : min((w+1)*perWorkspace, len(ts))]
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if err := b.createWorkspace(ctx, db, w, part); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (b *bench) createWorkspace(ctx context.Context, db *store.DB, n int, ts []benchTarget) error {
	interval := int(b.c.interval / time.Second)
	now := time.Now().UTC().Truncate(time.Microsecond)
	ws := account.Workspace{ID: ids.New(ids.Workspace, now), Name: fmt.Sprintf("checkbench %d", n),
		Slug: fmt.Sprintf("checkbench-%d", n), MaxMonitors: perWorkspace, MinIntervalSeconds: min(interval, monitor.MinIntervalSeconds), CreatedAt: now}
	if err := db.CreateWorkspace(ctx, ws); err != nil {
		return err
	}
	for _, t := range ts {
		// The draft as a client would send it, with the API's defaults
		// filled in; the store itself takes intervals below the API's
		// minimum, for short trial runs.
		d := monitor.Draft{Type: monitor.TypeHTTP, Name: "checkbench " + t.ID[len(t.ID)-6:],
			Config:          monitor.Config{URL: t.URL, TimeoutSeconds: b.c.timeout},
			IntervalSeconds: max(interval, monitor.MinIntervalSeconds)}
		if errs := d.Normalize(); len(errs) > 0 {
			return fmt.Errorf("monitor %s: %v", t.ID, errs)
		}
		now := time.Now().UTC().Truncate(time.Microsecond)
		m := monitor.Monitor{ID: t.ID, WorkspaceID: ws.ID, Type: d.Type, Name: d.Name, Config: d.Config,
			IntervalSeconds: interval, State: monitor.StatePending, StateSince: now, CreatedAt: now, UpdatedAt: now}
		if err := db.CreateMonitor(ctx, m, store.Sealed{}, perWorkspace); err != nil {
			return err
		}
	}
	return nil
}
