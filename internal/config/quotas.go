package config

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/monitor"
)

// quotaFlags are the quota settings as given, to quote in problems.
type quotaFlags struct{ monitors, heartbeats, minInterval, windows, channels string }

func quotaSettings(q *quotaFlags) []setting {
	return []setting{
		{"max-monitors", "TOCSIN_MAX_MONITORS", "monitors per workspace, unless the workspace has its own quota (tocsin workspace set-quota)", "1000", &q.monitors},
		{"max-heartbeats", "TOCSIN_MAX_HEARTBEATS", "heartbeats per workspace, unless the workspace has its own quota; default the same as max-monitors", "", &q.heartbeats},
		{"min-interval", "TOCSIN_MIN_INTERVAL", "shortest check interval of a monitor, unless the workspace has its own (whole seconds, at least 10s)", "10s", &q.minInterval},
		{"max-maintenance-windows", "TOCSIN_MAX_MAINTENANCE_WINDOWS", "maintenance windows per workspace, unless the workspace has its own quota", "100", &q.windows},
		{"max-channels", "TOCSIN_MAX_CHANNELS", "notification channels per workspace, unless the workspace has its own quota", "100", &q.channels},
	}
}

// setQuotas parses the quota flags; what does not parse becomes -1, out of
// range, so Validate reports it with every other problem.
func (c *Config) setQuotas(q quotaFlags) {
	c.rawQuotas = q
	count := func(raw string) int {
		if raw == "" {
			return 0
		}
		n, err := strconv.Atoi(raw)
		if err != nil {
			return -1
		}
		return n
	}
	c.MaxMonitors, c.MaxHeartbeats = count(q.monitors), count(q.heartbeats)
	c.MaxMaintenanceWindows, c.MaxChannels = count(q.windows), count(q.channels)
	c.MinInterval = -1
	if q.minInterval == "" {
		c.MinInterval = 0
	} else if d, err := time.ParseDuration(q.minInterval); err == nil {
		c.MinInterval = d
	}
}

// quotaProblems checks the quotas: counts from 1 to account.MaxQuota and a
// whole number of seconds within the monitors' interval bounds. Zero (a
// Config built in code) is the built-in default.
func (c Config) quotaProblems() []error {
	var p []error
	for _, q := range []struct {
		name, raw string
		v         int
	}{{"max-monitors", c.rawQuotas.monitors, c.MaxMonitors}, {"max-heartbeats", c.rawQuotas.heartbeats, c.MaxHeartbeats},
		{"max-maintenance-windows", c.rawQuotas.windows, c.MaxMaintenanceWindows}, {"max-channels", c.rawQuotas.channels, c.MaxChannels}} {
		if q.v < 0 || q.v > account.MaxQuota || (q.v == 0 && q.raw != "") {
			p = append(p, fmt.Errorf("%s: %s must be a whole number from 1 to %d", q.name, quoted(q.raw, strconv.Itoa(q.v)), account.MaxQuota))
		}
	}
	lo, hi := monitor.MinIntervalSeconds*time.Second, monitor.MaxIntervalSeconds*time.Second
	if d := c.MinInterval; d != 0 && (d < lo || d > hi || d%time.Second != 0) {
		p = append(p, fmt.Errorf("min-interval: %s must be whole seconds from %s to %s, such as 30s", quoted(c.rawQuotas.minInterval, d.String()), lo, hi))
	}
	return p
}

// ValidateQuotas checks the quota settings alone, for the commands that
// print or change quotas.
func (c Config) ValidateQuotas() error { return errors.Join(c.quotaProblems()...) }

func (c Config) redactedQuotas() string {
	hb := strconv.Itoa(c.MaxHeartbeats)
	if c.MaxHeartbeats == 0 {
		hb = "(as max-monitors)"
	}
	return fmt.Sprintf(" max-monitors=%d max-heartbeats=%s min-interval=%s max-maintenance-windows=%d max-channels=%d",
		c.MaxMonitors, hb, c.MinInterval, c.MaxMaintenanceWindows, c.MaxChannels)
}
