package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/store"
)

// withQuotas gives the app the server's default quotas from the flags.
func withQuotas(c config.Config, ac app.Config) app.Config {
	ac.DefaultMaxMonitors, ac.DefaultMaxHeartbeats = c.MaxMonitors, c.MaxHeartbeats
	ac.DefaultMinIntervalSeconds = int(c.MinInterval / time.Second)
	ac.DefaultMaxMaintenanceWindows, ac.DefaultMaxChannels = c.MaxMaintenanceWindows, c.MaxChannels
	return ac
}

func workspaceCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub := ""
	if len(args) > 0 {
		sub = args[0]
	}
	switch sub {
	case "show":
		return workspaceShow(ctx, args[1:], getenv, stdout, stderr)
	case "set-quota":
		return workspaceSetQuota(ctx, args[1:], getenv, stdout, stderr)
	}
	fmt.Fprintf(stderr, "Usage: tocsin workspace show | set-quota --workspace W [flags]\n")
	return errUsage
}

// workspaceApp opens the database for a workspace command, with the
// default quotas this command's flags and environment give: the same as
// serve's when it runs with the same settings.
func workspaceApp(ctx context.Context, name string, args []string, getenv func(string) string, stderr io.Writer, extra func(*flag.FlagSet)) (*app.App, *store.DB, error) {
	c, log, db, err := adminStore(ctx, name, args, getenv, stderr, extra, false)
	if err != nil {
		return nil, nil, err
	}
	if err := c.ValidateQuotas(); err != nil {
		db.Close()
		return nil, nil, err
	}
	return app.New(db, nil, time.Now, log, withQuotas(c, app.Config{})), db, nil
}

func workspaceShow(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var workspace string
	a, db, err := workspaceApp(ctx, "workspace show", args, getenv, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&workspace, "workspace", "", "workspace id or slug (required)")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if workspace == "" {
		return errors.New("--workspace: required")
	}
	q, err := a.ShowWorkspace(ctx, workspace)
	if err != nil {
		return err
	}
	printQuotas(stdout, q)
	return nil
}

// printQuotas prints one line per quota: what applies, where it comes
// from, and what the workspace holds.
func printQuotas(w io.Writer, q app.WorkspaceQuotas) {
	fmt.Fprintf(w, "workspace %s (%s)\n", q.Workspace.Slug, q.Workspace.ID)
	fmt.Fprintf(w, "%-20s %-10s %-26s %s\n", "QUOTA", "LIMIT", "SOURCE", "USED")
	row := func(name, limit, used string, isOverride bool) {
		src := "server default"
		if isOverride {
			src = "workspace (set-quota)"
		}
		fmt.Fprintf(w, "%-20s %-10s %-26s %s\n", name, limit, src, used)
	}
	e, o, u := q.Effective, q.Overrides, q.Usage
	row("monitors", strconv.Itoa(e.Monitors), strconv.Itoa(u.Monitors), o.Monitors != 0)
	row("heartbeats", strconv.Itoa(e.Heartbeats), strconv.Itoa(u.Heartbeats), o.Heartbeats != 0)
	shortest := "-"
	if u.MinIntervalSeconds != 0 {
		shortest = fmt.Sprintf("shortest %ds", u.MinIntervalSeconds)
	}
	row("min-interval", fmt.Sprintf("%ds", e.MinIntervalSeconds), shortest, o.MinIntervalSeconds != 0)
	row("maintenance-windows", strconv.Itoa(e.MaintenanceWindows), strconv.Itoa(u.MaintenanceWindows), o.MaintenanceWindows != 0)
	row("channels", strconv.Itoa(e.Channels), strconv.Itoa(u.Channels), o.Channels != 0)
}

// quotaValue is a quota flag: a number, or "default" to drop the
// workspace's override.
type quotaValue struct {
	v        *int
	duration bool
}

func (q *quotaValue) String() string {
	if q == nil || q.v == nil {
		return ""
	}
	return strconv.Itoa(*q.v)
}

func (q *quotaValue) Set(s string) error {
	n := 0
	switch {
	case s == "default":
	case q.duration:
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d%time.Second != 0 {
			return errors.New(`must be whole seconds such as 30s, or "default"`)
		}
		n = int(d / time.Second)
	default:
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || v > account.MaxQuota {
			return fmt.Errorf(`must be a whole number from 1 to %d, or "default"`, account.MaxQuota)
		}
		n = v
	}
	q.v = &n
	return nil
}

func workspaceSetQuota(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var workspace string
	var mon, hb, minInterval, windows, channels quotaValue
	minInterval.duration = true
	a, db, err := workspaceApp(ctx, "workspace set-quota", args, getenv, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&workspace, "workspace", "", "workspace id or slug (required)")
		fs.Var(&mon, "monitors", `most monitors the workspace may hold, or "default" for the server's (max-monitors)`)
		fs.Var(&hb, "heartbeats", `most heartbeats, or "default" (max-heartbeats)`)
		fs.Var(&minInterval, "min-interval", `shortest check interval such as 30s, or "default" for the server's (TOCSIN_MIN_INTERVAL)`)
		fs.Var(&windows, "maintenance-windows", `most maintenance windows, or "default" (max-maintenance-windows)`)
		fs.Var(&channels, "channels", `most notification channels, or "default" (max-channels)`)
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if workspace == "" {
		return errors.New("--workspace: required")
	}
	ch := app.QuotaChange{Monitors: mon.v, Heartbeats: hb.v, MinIntervalSeconds: minInterval.v,
		MaintenanceWindows: windows.v, Channels: channels.v}
	if ch == (app.QuotaChange{}) {
		return errors.New("nothing to change: give at least one of --monitors, --heartbeats, --min-interval, --maintenance-windows, --channels")
	}
	var q app.WorkspaceQuotas
	err = inTurn(ctx, db, func() (err error) {
		q, err = a.SetWorkspaceQuotas(ctx, workspace, ch)
		return err
	})
	if err != nil {
		return describe(err)
	}
	printQuotas(stdout, q)
	return nil
}
