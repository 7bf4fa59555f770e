package metrics

// Checks counts check results by outcome.
type Checks struct {
	Up, Degraded, Down, Unknown int64
}

// Add sums two counts, e.g. of rollup rows.
func (c Checks) Add(o Checks) Checks {
	return Checks{Up: c.Up + o.Up, Degraded: c.Degraded + o.Degraded, Down: c.Down + o.Down, Unknown: c.Unknown + o.Unknown}
}

// Total counts every check, unknown ones included.
func (c Checks) Total() int64 { return c.Up + c.Degraded + c.Down + c.Unknown }
