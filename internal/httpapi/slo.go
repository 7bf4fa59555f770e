package httpapi

import (
	"encoding/json"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/stamp"
)

// Objectives on the wire: a monitor's or heartbeat's slo, and the error
// budget its metrics show.

// Objective is a subject's service level objective.
type Objective struct {
	Target     float64 `json:"target"`
	PeriodDays int     `json:"periodDays"`
}

// Schema documents the objective inline and nullable: null is how a
// response says none and a PATCH removes it. The bounds are the
// application's, whose 422 says what is accepted.
func (Objective) Schema(huma.Registry) *huma.Schema {
	return &huma.Schema{Type: huma.TypeObject, Nullable: true, Required: []string{"target", "periodDays"}, AdditionalProperties: false,
		Description: "A service level objective: the share of known time the subject should be UP or DEGRADED, over a rolling period of days. Its metrics then show the error budget, and burn-rate alerts (slo.burn_rate events) go to the channels.",
		Properties: map[string]*huma.Schema{
			"target":     {Type: huma.TypeNumber, Description: "Share of known time UP or DEGRADED, e.g. 0.999; above 0, at most 0.99999."},
			"periodDays": {Type: huma.TypeInteger, Description: "Rolling period of the error budget in days, 1 to 90."},
		}}
}

func (o *Objective) domain() *monitor.SLO {
	if o == nil {
		return nil
	}
	return &monitor.SLO{Target: o.Target, PeriodDays: o.PeriodDays}
}

func toObjective(s *monitor.SLO) *Objective {
	if s == nil {
		return nil
	}
	return &Objective{Target: s.Target, PeriodDays: s.PeriodDays}
}

// ObjectivePatch is a PATCH's slo: absent keeps the objective, null
// removes it, an object replaces it.
type ObjectivePatch struct {
	Given bool
	Value *Objective
}

// Schema is the objective's.
func (ObjectivePatch) Schema(r huma.Registry) *huma.Schema {
	s := Objective{}.Schema(r)
	s.Description = "Absent keeps the objective, null removes it, an object replaces it. " + s.Description
	return s
}

// UnmarshalJSON is called only when slo is given, null included.
func (p *ObjectivePatch) UnmarshalJSON(b []byte) error {
	p.Given, p.Value = true, nil
	if string(b) == "null" {
		return nil
	}
	p.Value = &Objective{}
	return json.Unmarshal(b, p.Value)
}

// apply is the objective after the patch, from cur.
func (p ObjectivePatch) apply(cur *monitor.SLO) *monitor.SLO {
	if !p.Given {
		return cur
	}
	return p.Value.domain()
}

// SLOFigures are a subject's error budget over its objective's period
// ending now.
type SLOFigures struct {
	Target          float64    `json:"target"`
	PeriodDays      int        `json:"periodDays"`
	From            stamp.Time `json:"from" doc:"Start of the objective's period: periodDays before now, whatever span the query asked for."`
	To              stamp.Time `json:"to" doc:"Now."`
	BudgetSeconds   float64    `json:"budgetSeconds" doc:"The error budget: (1 − target) × the known time of the period, in seconds."`
	SpentSeconds    float64    `json:"spentSeconds" doc:"Seconds DOWN in the period."`
	BudgetRemaining *float64   `json:"budgetRemaining" nullable:"true" doc:"1 − spent / budget: the fraction of the budget left, negative when overspent; null when nothing is known in the period."`
	BurnRate1h      *float64   `json:"burnRate1h" nullable:"true" doc:"How fast the last hour spent the budget: (down / known time) / (1 − target); 1 spends exactly the budget over the period. Null when nothing is known in the hour."`
	BurnRate6h      *float64   `json:"burnRate6h" nullable:"true" doc:"The same over the last six hours."`
}

func toSLOFigures(f *app.SLOFigures) *SLOFigures {
	if f == nil {
		return nil
	}
	return &SLOFigures{Target: f.Objective.Target, PeriodDays: f.Objective.PeriodDays, From: stamp.Of(f.From), To: stamp.Of(f.To),
		BudgetSeconds: seconds(f.Allowed), SpentSeconds: seconds(f.Spent), BudgetRemaining: f.Left,
		BurnRate1h: f.BurnRate1h, BurnRate6h: f.BurnRate6h}
}
