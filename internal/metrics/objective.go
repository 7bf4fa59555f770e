package metrics

import (
	"math"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
)

// Objective is a service level objective on a subject: the share of known
// time it should be up or degraded, over a rolling period.
type Objective struct {
	Target     float64 `json:"target" doc:"Share of known time the subject should be UP or DEGRADED, e.g. 0.999; above 0, at most 0.99999."`
	PeriodDays int     `json:"periodDays" doc:"Rolling period of the error budget in days, 1 to 90."`
}

// Bounds of an Objective.
const (
	MaxTarget     = 0.99999 // five nines: finer than checks every few seconds can tell
	MaxPeriodDays = 90
)

// Validate reports the fields out of bounds as an errs.KindInvalid error
// whose field pointers (/target, /periodDays) are relative to the
// objective; the caller prefixes where it sits in the request.
func (o Objective) Validate() error {
	var fs []errs.FieldError
	if !(o.Target > 0 && o.Target <= MaxTarget) {
		fs = append(fs, errs.FieldError{Pointer: "/target", Message: "must be above 0 and at most 0.99999 (five nines), e.g. 0.999"})
	}
	if o.PeriodDays < 1 || o.PeriodDays > MaxPeriodDays {
		fs = append(fs, errs.FieldError{Pointer: "/periodDays", Message: "must be 1 to 90 days"})
	}
	if fs == nil {
		return nil
	}
	return &errs.Error{Kind: errs.KindInvalid, Message: "invalid objective", Fields: fs}
}

// Period is the objective's rolling period.
func (o Objective) Period() time.Duration { return time.Duration(o.PeriodDays) * 24 * time.Hour }

// Budget is an objective's error budget over its period. Bad time is DOWN
// and the budget is a share of known time, as in availability: UNKNOWN,
// PENDING, PAUSED and MAINTENANCE time neither spends nor earns budget.
type Budget struct {
	Allowed, Spent time.Duration
	// Left is the fraction of the budget left, negative when overspent;
	// nil when nothing was known.
	Left *float64
	// BurnRate1h and BurnRate6h are BurnRate over the last hour and six.
	BurnRate1h, BurnRate6h *float64
}

// Budget computes the budget from the durations of the period and of its
// last hour and six hours.
func (o Objective) Budget(period, last1h, last6h Durations) Budget {
	known := float64(period.Known())
	b := Budget{
		Allowed:    time.Duration(math.Round(known * o.share())),
		Spent:      period.Down,
		BurnRate1h: o.BurnRate(last1h),
		BurnRate6h: o.BurnRate(last6h),
	}
	if known > 0 {
		left := 1 - float64(period.Down)/(known*o.share())
		b.Left = &left
	}
	return b
}

// BurnRate is how fast a span spends the budget: (Down/Known)/(1−Target),
// so 1 spends exactly the budget over the period; nil when Known is 0.
func (o Objective) BurnRate(d Durations) *float64 {
	if d.Known() <= 0 {
		return nil
	}
	r := float64(d.Down) / (float64(d.Known()) * o.share())
	return &r
}

// share is the budget's share of known time, 1−Target, rounded to 1e-12
// so that 1−0.999 is 0.001 and not 0.0010000000000000009: a valid target
// has at most five nines, so the rounding loses nothing.
func (o Objective) share() float64 { return math.Round((1-o.Target)*1e12) / 1e12 }

// BurnRule is a multi-window burn-rate alert: it fires when both the long
// and the short window burn at Factor or faster. The long window makes it
// significant, the short one makes it stop soon after the burning stops.
type BurnRule struct {
	Name        string
	Long, Short time.Duration
	Factor      float64
}

// BurnRules are the default rules, after the Google SRE workbook (chapter
// 5, multiwindow multi-burn-rate alerts): "fast" spends 2% of a 30-day
// budget in an hour, "slow" 5% in six hours. Faster rules come first.
var BurnRules = []BurnRule{
	{Name: "fast", Long: time.Hour, Short: 5 * time.Minute, Factor: 14.4},
	{Name: "slow", Long: 6 * time.Hour, Short: 30 * time.Minute, Factor: 6},
}

// Firing reports the first of BurnRules whose long and short windows both
// burn at or above its factor; burn gives the Durations of the last d.
func (o Objective) Firing(burn func(d time.Duration) Durations) (BurnRule, bool) {
	for _, r := range BurnRules {
		if o.burnsAt(burn(r.Long), r.Factor) && o.burnsAt(burn(r.Short), r.Factor) {
			return r, true
		}
	}
	return BurnRule{}, false
}

// burnsAt compares with a relative tolerance of 1e-9, so a burn of exactly
// the factor, computed in floating point, counts as at the factor.
func (o Objective) burnsAt(d Durations, factor float64) bool {
	r := o.BurnRate(d)
	return r != nil && *r >= factor*(1-1e-9)
}
