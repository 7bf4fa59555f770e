package app

import (
	"context"
	"fmt"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
)

// Quotas are the operator's: the server's defaults come from Config (flags
// of serve) and a workspace may override each (`tocsin workspace
// set-quota`). The counts are enforced by the store in each create's
// transaction, with the workspace's override read there, so a change
// applies to the next create on every node and two creates at the limit
// never both pass; the minimum interval is read per request.

// DefaultQuotas are the server's quotas for workspaces without overrides.
func (c Config) DefaultQuotas() account.Quotas {
	return account.Quotas{Monitors: c.DefaultMaxMonitors, Heartbeats: c.DefaultMaxHeartbeats,
		MinIntervalSeconds: c.DefaultMinIntervalSeconds, MaintenanceWindows: c.DefaultMaxMaintenanceWindows,
		Channels: c.DefaultMaxChannels}
}

// quotasOf is a workspace's effective quotas.
func (a *App) quotasOf(ctx context.Context, wsID string) (account.Quotas, error) {
	ws, err := a.store.Workspace(ctx, wsID)
	if err != nil {
		return account.Quotas{}, err
	}
	return ws.Overrides().Over(a.cfg.DefaultQuotas()), nil
}

// WorkspaceQuotas is what `tocsin workspace show` prints.
type WorkspaceQuotas struct {
	Workspace account.Workspace
	Overrides account.Quotas // zero where the default applies
	Defaults  account.Quotas // this process's configuration
	Effective account.Quotas
	Usage     account.Quotas // MinIntervalSeconds is the shortest interval in use, 0 without monitors
}

// ShowWorkspace reports a workspace's quotas and what it holds, for the
// operator.
func (a *App) ShowWorkspace(ctx context.Context, idOrSlug string) (WorkspaceQuotas, error) {
	ws, err := a.store.Workspace(ctx, idOrSlug)
	if err != nil {
		return WorkspaceQuotas{}, fmt.Errorf("workspace %q: %w", idOrSlug, err)
	}
	u, err := a.store.WorkspaceUsage(ctx, ws.ID)
	if err != nil {
		return WorkspaceQuotas{}, err
	}
	d := a.cfg.DefaultQuotas()
	return WorkspaceQuotas{Workspace: ws, Overrides: ws.Overrides(), Defaults: d, Effective: ws.Overrides().Over(d), Usage: u}, nil
}

// QuotaChange is what `tocsin workspace set-quota` asks for: nil leaves a
// quota as it is, a pointer to 0 returns it to the server's default.
type QuotaChange struct {
	Monitors, Heartbeats, MinIntervalSeconds, MaintenanceWindows, Channels *int
}

// SetWorkspaceQuotas changes a workspace's overrides for the operator. A
// quota below what the workspace already holds keeps what is there and
// refuses further creates.
func (a *App) SetWorkspaceQuotas(ctx context.Context, idOrSlug string, ch QuotaChange) (WorkspaceQuotas, error) {
	var fields []errs.FieldError
	count := func(name string, v *int) {
		if v != nil && (*v < 0 || *v > account.MaxQuota) {
			fields = append(fields, errs.FieldError{Pointer: name, Message: fmt.Sprintf("must be from 1 to %d, or default", account.MaxQuota)})
		}
	}
	count("monitors", ch.Monitors)
	count("heartbeats", ch.Heartbeats)
	count("maintenance-windows", ch.MaintenanceWindows)
	count("channels", ch.Channels)
	if v := ch.MinIntervalSeconds; v != nil && *v != 0 && (*v < monitor.MinIntervalSeconds || *v > monitor.MaxIntervalSeconds) {
		fields = append(fields, errs.FieldError{Pointer: "min-interval", Message: fmt.Sprintf("must be from %ds to %ds, or default",
			monitor.MinIntervalSeconds, monitor.MaxIntervalSeconds)})
	}
	if len(fields) > 0 {
		return WorkspaceQuotas{}, &errs.Error{Kind: errs.KindInvalid, Message: "invalid quota", Fields: fields}
	}
	ws, err := a.store.Workspace(ctx, idOrSlug)
	if err != nil {
		return WorkspaceQuotas{}, fmt.Errorf("workspace %q: %w", idOrSlug, err)
	}
	q := ws.Overrides()
	for _, c := range []struct {
		v   *int
		dst *int
	}{{ch.Monitors, &q.Monitors}, {ch.Heartbeats, &q.Heartbeats}, {ch.MinIntervalSeconds, &q.MinIntervalSeconds},
		{ch.MaintenanceWindows, &q.MaintenanceWindows}, {ch.Channels, &q.Channels}} {
		if c.v != nil {
			*c.dst = *c.v
		}
	}
	if err := a.store.SetWorkspaceQuotas(ctx, ws.ID, q); err != nil {
		return WorkspaceQuotas{}, err
	}
	return a.ShowWorkspace(ctx, ws.ID)
}
