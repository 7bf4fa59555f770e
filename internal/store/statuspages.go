package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// Status pages (statuspage.Config) as rows: the page in status_pages, its
// components in status_page_components, its logo's bytes in the page's row
// (read only by StatusPageLogo).

// quotaStatusPages: the override column exists, but no command sets it
// yet, so the refusal names no flag.
var quotaStatusPages = counted{"status_pages", "quota_status_pages", "status pages", ""}

const pageColumns = `id, workspace_id, slug, title, description, visibility, password_hash, password_version,
	custom_domain, show_uptime, uptime_days, paused_components, show_incidents, show_maintenance, accent,
	footer_links, group_names, logo_type, logo_version, logo_updated_at, COALESCE(length(logo), 0), created_at, updated_at`

func scanPage(row rowScanner) (statuspage.Config, error) {
	var (
		p                   statuspage.Config
		domain              sql.NullString
		links, groups       string
		logoType, logoVer   string
		logoAt              sql.NullInt64
		logoSize            int
		created, upd        int64
		visibility, pausedC string
	)
	err := row.Scan(&p.ID, &p.WorkspaceID, &p.Slug, &p.Title, &p.Description, &visibility, &p.PasswordHash, &p.PasswordVersion,
		&domain, &p.ShowUptime, &p.UptimeDays, &pausedC, &p.ShowIncidents, &p.ShowMaintenance, &p.Accent,
		&links, &groups, &logoType, &logoVer, &logoAt, &logoSize, &created, &upd)
	if err != nil {
		return statuspage.Config{}, classify(err)
	}
	p.Visibility, p.PausedComponents = statuspage.Visibility(visibility), statuspage.PausedComponents(pausedC)
	p.CustomDomain = domain.String
	var stored []struct{ Label, URL string }
	if err := json.Unmarshal([]byte(links), &stored); err != nil {
		return statuspage.Config{}, fmt.Errorf("status page %s: footer links: %w", p.ID, err)
	}
	for _, l := range stored {
		p.FooterLinks = append(p.FooterLinks, statuspage.Link{Label: l.Label, URL: l.URL})
	}
	var names []string
	if err := json.Unmarshal([]byte(groups), &names); err != nil {
		return statuspage.Config{}, fmt.Errorf("status page %s: groups: %w", p.ID, err)
	}
	for _, n := range names {
		p.Groups = append(p.Groups, statuspage.ConfigGroup{Name: n})
	}
	if logoVer != "" {
		p.Logo = &statuspage.Logo{ContentType: logoType, SizeBytes: logoSize, Version: logoVer, UpdatedAt: fromNullMicros(logoAt)}
	}
	p.CreatedAt, p.UpdatedAt = fromMicros(created), fromMicros(upd)
	return p, nil
}

// queryPages reads pages with their components in one snapshot, so a page
// edited between two reads never shows another version's components.
func (db *DB) queryPages(ctx context.Context, where string, args ...any) (ps []statuspage.Config, err error) {
	err = db.inSnapshot(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+pageColumns+` FROM status_pages `+where, args...)
		if ps, err = collect(rows, err, scanPage); err != nil || len(ps) == 0 {
			return err
		}
		ids := make([]any, len(ps))
		at := make(map[string]int, len(ps))
		for i, p := range ps {
			ids[i], at[p.ID] = p.ID, i
		}
		rows, err = tx.QueryContext(ctx, `SELECT page_id, group_position, id, monitor_id, heartbeat_id, name, description
			FROM status_page_components WHERE page_id IN (`+placeholders(1, len(ids))+`)
			ORDER BY page_id, group_position, position`, ids...)
		return each(rows, err, func(r rowScanner) error {
			var (
				pid      string
				g        int
				c        statuspage.ConfigComponent
				mid, hid sql.NullString
			)
			if err := r.Scan(&pid, &g, &c.ID, &mid, &hid, &c.Name, &c.Description); err != nil {
				return err
			}
			c.MonitorID, c.HeartbeatID = mid.String, hid.String
			p := &ps[at[pid]]
			if g < 0 || g >= len(p.Groups) {
				return fmt.Errorf("status page %s: component %s in group %d of %d", pid, c.ID, g, len(p.Groups))
			}
			p.Groups[g].Components = append(p.Groups[g].Components, c)
			return nil
		})
	})
	return ps, err
}

func onePage(ps []statuspage.Config, err error) (statuspage.Config, error) {
	if err != nil {
		return statuspage.Config{}, err
	}
	if len(ps) == 0 {
		return statuspage.Config{}, errs.ErrNotFound
	}
	return ps[0], nil
}

// pageRow is what a user edits of a page: every column but the id,
// workspace, creation time and logo.
func pageRow(p statuspage.Config) ([]any, error) {
	links := make([]struct {
		Label string `json:"label"`
		URL   string `json:"url"`
	}, len(p.FooterLinks))
	for i, l := range p.FooterLinks {
		links[i].Label, links[i].URL = l.Label, l.URL
	}
	names := make([]string, len(p.Groups))
	for i, g := range p.Groups {
		names[i] = g.Name
	}
	lj, err := json.Marshal(links)
	if err != nil {
		return nil, err
	}
	nj, err := json.Marshal(names)
	if err != nil {
		return nil, err
	}
	return []any{p.Slug, p.Title, p.Description, string(p.Visibility), p.PasswordHash, p.PasswordVersion,
		nullString(p.CustomDomain), p.ShowUptime, p.UptimeDays, string(p.PausedComponents), p.ShowIncidents,
		p.ShowMaintenance, p.Accent, string(lj), string(nj), micros(p.UpdatedAt)}, nil
}

// putComponents checks that every monitor and heartbeat of p is in its
// workspace (*UnknownMonitorsError, *UnknownHeartbeatsError, together)
// and writes the page's components in order.
func (db *DB) putComponents(ctx context.Context, tx *sql.Tx, p statuspage.Config) error {
	var monitors, heartbeats []string
	for _, g := range p.Groups {
		for _, c := range g.Components {
			if c.MonitorID != "" {
				monitors = append(monitors, c.MonitorID)
			} else {
				heartbeats = append(heartbeats, c.HeartbeatID)
			}
		}
	}
	missingMonitors, err := db.unknownSubjects(ctx, tx, monitorSubjects, p.WorkspaceID, monitors, true)
	if err != nil {
		return err
	}
	missingHeartbeats, err := db.unknownSubjects(ctx, tx, heartbeatSubjects, p.WorkspaceID, heartbeats, true)
	if err != nil {
		return err
	}
	switch {
	case len(missingMonitors) > 0 && len(missingHeartbeats) > 0:
		return errors.Join(&UnknownMonitorsError{IDs: missingMonitors}, &UnknownHeartbeatsError{IDs: missingHeartbeats})
	case len(missingMonitors) > 0:
		return &UnknownMonitorsError{IDs: missingMonitors}
	case len(missingHeartbeats) > 0:
		return &UnknownHeartbeatsError{IDs: missingHeartbeats}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM status_page_components WHERE page_id = $1`, p.ID); err != nil {
		return err
	}
	var (
		q    strings.Builder
		args []any
	)
	for gi, g := range p.Groups {
		for ci, c := range g.Components {
			if len(args) > 0 {
				q.WriteString(", ")
			}
			n := len(args)
			fmt.Fprintf(&q, "($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+7, n+8)
			args = append(args, c.ID, p.ID, gi, ci, nullString(c.MonitorID), nullString(c.HeartbeatID), c.Name, c.Description)
		}
	}
	if len(args) == 0 {
		return nil
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO status_page_components (id, page_id, group_position, position,
		monitor_id, heartbeat_id, name, description) VALUES `+q.String(), args...)
	return classify(err)
}

// CreateStatusPage stores p unless its workspace already has as many pages
// as its quota allows (ErrQuota), its slug or custom domain is taken in
// the installation (ErrConflict; StatusPageTaken says which), or a monitor
// or heartbeat it shows is not one of the workspace's
// (*UnknownMonitorsError, *UnknownHeartbeatsError).
func (db *DB) CreateStatusPage(ctx context.Context, p statuspage.Config, maxPages int) (err error) {
	defer errs.Wrap(&err, "store.CreateStatusPage(%s)", p.ID)
	row, err := pageRow(p)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if err := db.withinQuota(ctx, tx, p.WorkspaceID, quotaStatusPages, maxPages); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO status_pages (id, workspace_id, created_at, slug, title, description,
			visibility, password_hash, password_version, custom_domain, show_uptime, uptime_days, paused_components,
			show_incidents, show_maintenance, accent, footer_links, group_names, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
			append([]any{p.ID, p.WorkspaceID, micros(p.CreatedAt)}, row...)...)
		if err != nil {
			return classify(err)
		}
		return db.putComponents(ctx, tx, p)
	})
}

// GetStatusPage returns a page of the workspace; ErrNotFound also when it
// belongs to another workspace.
func (db *DB) GetStatusPage(ctx context.Context, wsID, id string) (p statuspage.Config, err error) {
	defer errs.Wrap(&err, "store.GetStatusPage(%s)", id)
	return onePage(db.queryPages(ctx, `WHERE workspace_id = $1 AND id = $2`, wsID, id))
}

// ListStatusPages returns up to limit pages of the workspace with ids
// after afterID, by id (creation order).
func (db *DB) ListStatusPages(ctx context.Context, wsID, afterID string, limit int) (ps []statuspage.Config, err error) {
	defer errs.Wrap(&err, "store.ListStatusPages(%s)", wsID)
	if limit <= 0 {
		return nil, errors.New("limit must be positive")
	}
	return db.queryPages(ctx, `WHERE workspace_id = $1 AND id > $2 ORDER BY id LIMIT $3`, wsID, afterID, limit)
}

func (db *DB) CountStatusPages(ctx context.Context, wsID string) (n int, err error) {
	defer errs.Wrap(&err, "store.CountStatusPages(%s)", wsID)
	err = db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM status_pages WHERE workspace_id = $1`, wsID).Scan(&n)
	return n, err
}

// StatusPageBySlug returns the page with the slug, whatever its
// workspace: for the public pages.
func (db *DB) StatusPageBySlug(ctx context.Context, slug string) (p statuspage.Config, err error) {
	defer errs.Wrap(&err, "store.StatusPageBySlug")
	return onePage(db.queryPages(ctx, `WHERE slug = $1`, slug))
}

// StatusPageByDomain returns the page served at a custom domain.
func (db *DB) StatusPageByDomain(ctx context.Context, host string) (p statuspage.Config, err error) {
	defer errs.Wrap(&err, "store.StatusPageByDomain")
	return onePage(db.queryPages(ctx, `WHERE custom_domain = $1`, host))
}

// StatusPageTaken reports whether another page than exceptID, in any
// workspace, has the slug or (when not "") the custom domain.
func (db *DB) StatusPageTaken(ctx context.Context, slug, domain, exceptID string) (slugTaken, domainTaken bool, err error) {
	defer errs.Wrap(&err, "store.StatusPageTaken")
	rows, err := db.r.QueryContext(ctx, `SELECT slug = $1, COALESCE(custom_domain = $2, false) FROM status_pages
		WHERE (slug = $1 OR custom_domain = $2) AND id <> $3`, slug, nullString(domain), exceptID)
	err = each(rows, err, func(r rowScanner) error {
		var s, d bool
		if err := r.Scan(&s, &d); err != nil {
			return err
		}
		slugTaken, domainTaken = slugTaken || s, domainTaken || d
		return nil
	})
	return slugTaken, domainTaken, err
}

// UpdateStatusPage replaces what a user edits — everything but the id,
// workspace, creation time and logo — if the row is still as the caller
// read it (updated_at = prevUpdatedAt); else ErrStale.
func (db *DB) UpdateStatusPage(ctx context.Context, p statuspage.Config, prevUpdatedAt time.Time) (err error) {
	defer errs.Wrap(&err, "store.UpdateStatusPage(%s)", p.ID)
	row, err := pageRow(p)
	if err != nil {
		return err
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		err := oneRow(tx.ExecContext(ctx, `UPDATE status_pages SET slug = $4, title = $5, description = $6,
			visibility = $7, password_hash = $8, password_version = $9, custom_domain = $10, show_uptime = $11,
			uptime_days = $12, paused_components = $13, show_incidents = $14, show_maintenance = $15, accent = $16,
			footer_links = $17, group_names = $18, updated_at = $19
			WHERE workspace_id = $1 AND id = $2 AND updated_at = $3`,
			append([]any{p.WorkspaceID, p.ID, micros(prevUpdatedAt)}, row...)...))
		if err != nil {
			return err
		}
		return db.putComponents(ctx, tx, p)
	})
	if errors.Is(err, errs.ErrNotFound) {
		if _, gerr := db.GetStatusPage(ctx, p.WorkspaceID, p.ID); gerr == nil {
			return ErrStale
		}
	}
	return err
}

// SetStatusPageLogo replaces a page's logo (data nil removes it) and
// marks the page updated at at.
func (db *DB) SetStatusPageLogo(ctx context.Context, wsID, id, contentType string, data []byte, version string, at time.Time) (err error) {
	defer errs.Wrap(&err, "store.SetStatusPageLogo(%s)", id)
	var logoAt any
	if data != nil {
		logoAt = micros(at)
	}
	return oneRow(db.w.ExecContext(ctx, `UPDATE status_pages SET logo = $3, logo_type = $4, logo_version = $5,
		logo_updated_at = $6, updated_at = `+db.d.greatest+`(updated_at + 1, $7)
		WHERE workspace_id = $1 AND id = $2`, wsID, id, nullBytes(data), contentType, version, logoAt, micros(at)))
}

// StatusPageLogo returns a page's logo; ErrNotFound when the page has
// none.
func (db *DB) StatusPageLogo(ctx context.Context, pageID string) (contentType string, data []byte, version string, err error) {
	defer errs.Wrap(&err, "store.StatusPageLogo(%s)", pageID)
	err = db.r.QueryRowContext(ctx, `SELECT logo_type, logo, logo_version FROM status_pages WHERE id = $1 AND logo IS NOT NULL`,
		pageID).Scan(&contentType, &data, &version)
	return contentType, data, version, classify(err)
}

// DeleteStatusPage removes a page with its components and logo.
func (db *DB) DeleteStatusPage(ctx context.Context, wsID, id string) (err error) {
	defer errs.Wrap(&err, "store.DeleteStatusPage(%s)", id)
	return oneRow(db.w.ExecContext(ctx, `DELETE FROM status_pages WHERE workspace_id = $1 AND id = $2`, wsID, id))
}

// StatusPageStamp is a short string that changes whenever anything a
// public page shows may have: the page's configuration (an edit, a new
// password or logo, its deletion), a state of one of its subjects (or the
// subject's deletion, which takes its component off), the workspace's
// public incidents open or resolved since since, and its
// maintenance windows. It reads a few index entries per subject, far less
// than a render reads, so the public pages may ask it every second.
func (db *DB) StatusPageStamp(ctx context.Context, wsID, pageID string, subjectIDs []string, since time.Time) (stamp string, err error) {
	defer errs.Wrap(&err, "store.StatusPageStamp(%s)", pageID)
	// A heartbeat's state may still be in the SQLite ping journal.
	if slices.ContainsFunc(subjectIDs, func(id string) bool { return strings.HasPrefix(id, ids.Heartbeat+"_") }) {
		if err := db.flushPings(ctx); err != nil {
			return "", err
		}
	}
	h := sha256.New()
	var pageUpdated, pwVersion, incCount, incLatest, winCount, winLatest int64
	err = db.r.QueryRowContext(ctx, `SELECT
			COALESCE((SELECT updated_at FROM status_pages WHERE workspace_id = $1 AND id = $2), -1),
			COALESCE((SELECT password_version FROM status_pages WHERE workspace_id = $1 AND id = $2), -1),
			(SELECT COUNT(*) FROM incidents WHERE workspace_id = $1 AND public AND (resolved_at = 0 OR resolved_at >= $3)),
			(SELECT COALESCE(MAX(updated_at), 0) FROM incidents WHERE workspace_id = $1 AND public AND (resolved_at = 0 OR resolved_at >= $3)),
			(SELECT COUNT(*) FROM maintenance_windows WHERE workspace_id = $1),
			(SELECT COALESCE(MAX(updated_at), 0) FROM maintenance_windows WHERE workspace_id = $1)`,
		wsID, pageID, micros(since)).Scan(&pageUpdated, &pwVersion, &incCount, &incLatest, &winCount, &winLatest)
	if err != nil {
		return "", classify(err)
	}
	fmt.Fprintf(h, "%d|%d|%d|%d|%d|%d\n", pageUpdated, pwVersion, incCount, incLatest, winCount, winLatest)
	for start := 0; start < len(subjectIDs); start += seqChunk {
		part := subjectIDs[start:min(start+seqChunk, len(subjectIDs))]
		args := make([]any, 0, len(part)+1)
		args = append(args, wsID)
		for _, id := range part {
			args = append(args, id)
		}
		in := placeholders(2, len(part))
		rows, err := db.r.QueryContext(ctx, `SELECT m.id, r.state, r.state_since FROM monitors m
				JOIN monitor_runtime r ON r.monitor_id = m.id
				WHERE m.workspace_id = $1 AND m.id IN (`+in+`)
			UNION ALL
			SELECT hb.id, r.state, r.state_since FROM heartbeats hb
				JOIN heartbeat_runtime r ON r.heartbeat_id = hb.id
				WHERE hb.workspace_id = $1 AND hb.id IN (`+in+`)
			ORDER BY 1`, args...)
		err = each(rows, err, func(r rowScanner) error {
			var (
				id, state string
				since     int64
			)
			if err := r.Scan(&id, &state, &since); err != nil {
				return err
			}
			fmt.Fprintf(h, "%s|%s|%d\n", id, state, since)
			return nil
		})
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:12]), nil
}
