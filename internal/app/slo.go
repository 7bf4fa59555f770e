package app

import (
	"context"
	"errors"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// Objectives: a monitor or heartbeat may carry one (monitor.SLO, whose
// rules and maths are metrics.Objective's). Its metrics then show the
// error budget over the objective's own period ending now, and a runner
// evaluates the burn-rate rules every minute: when one starts firing an
// slo.burn_rate event goes to the channels, and another when none fires
// any more, like an incident's opening and resolution.

// SLOProblems validates an objective of a request; the pointers name it
// at /slo. nil: none, which is valid.
func SLOProblems(s *monitor.SLO) []errs.FieldError {
	if s == nil {
		return nil
	}
	var e *errs.Error
	if !errors.As(metrics.Objective(*s).Validate(), &e) {
		return nil
	}
	out := make([]errs.FieldError, len(e.Fields))
	for i, f := range e.Fields {
		out[i] = errs.FieldError{Pointer: "/slo" + f.Pointer, Message: f.Message}
	}
	return out
}

// SLOFigures are a subject's error budget over its objective's period
// ending now, whatever window its metrics were asked for.
type SLOFigures struct {
	Objective metrics.Objective
	From, To  time.Time
	metrics.Budget
}

// sloFigures computes the budget of each subject with an objective, as of
// now; the others are absent.
func (a *App) sloFigures(ctx context.Context, subjects []metricsSubject, now time.Time) (map[string]*SLOFigures, error) {
	byPeriod := map[int][]metricsSubject{} // one read of the history per period
	for _, s := range subjects {
		if s.slo != nil {
			byPeriod[s.slo.PeriodDays] = append(byPeriod[s.slo.PeriodDays], s)
		}
	}
	out := map[string]*SLOFigures{}
	for days, ss := range byPeriod {
		from := now.Add(-metrics.Objective{PeriodDays: days}.Period())
		ids := make([]string, len(ss))
		for i, s := range ss {
			ids[i] = s.id
		}
		hist, err := a.store.StateHistories(ctx, ids, from, now)
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			o := metrics.Objective(*s.slo)
			tl := timeline(s, hist[s.id], from)
			out[s.id] = &SLOFigures{Objective: o, From: from, To: now, Budget: o.Budget(tl.Durations(from, now),
				tl.Durations(now.Add(-time.Hour), now), tl.Durations(now.Add(-6*time.Hour), now))}
		}
	}
	return out, nil
}

// SLO alert statuses, in the data of slo.burn_rate events.
const (
	SLOFiring   = "firing"
	SLOResolved = "resolved"
)

// sloAlerts is the name of the evaluation's lease (in rollup_progress,
// beside the rollups'), so one node evaluates at a time.
const sloAlerts = "slo-alerts"

// sloPage bounds the subjects and alerts read at once.
const sloPage = 500

// EvaluateSLOAlerts runs one round as owner, unless another node holds
// the turn: every subject with an objective whose rules start firing gets
// an open alert and a firing event; every open alert whose rules all
// stopped (or whose objective was removed) is resolved with a resolved
// event; the alert of a deleted subject is dropped.
func (a *App) EvaluateSLOAlerts(ctx context.Context, owner string) (err error) {
	defer errs.Wrap(&err, "app.EvaluateSLOAlerts")
	now := a.now()
	// The lease outlives a round by far; the round's progress (done_until)
	// is when it last ran.
	if _, ok, err := a.store.TakeRollupTurn(ctx, sloAlerts, owner, now, 5*time.Minute, now); err != nil || !ok {
		return err
	}
	defer func() { _ = a.store.EndRollupTurn(context.WithoutCancel(ctx), sloAlerts, owner) }()

	open := map[string]store.SLOAlert{}
	for after := ""; ; {
		page, err := a.store.SLOAlerts(ctx, after, sloPage)
		if err != nil {
			return err
		}
		for _, al := range page {
			open[al.SubjectID] = al
		}
		if len(page) < sloPage {
			break
		}
		after = page[len(page)-1].SubjectID
	}
	for after := ""; ; {
		page, err := a.store.SLOSubjects(ctx, after, sloPage)
		if err != nil {
			return err
		}
		if err := a.evaluatePage(ctx, page, open, now); err != nil {
			return err
		}
		for _, s := range page {
			delete(open, s.ID)
		}
		if len(page) < sloPage {
			break
		}
		after = page[len(page)-1].ID
	}
	// What is left open has no objective any more, or no subject.
	for _, al := range open {
		if err := a.resolveSLOAlert(ctx, al, nil, now, "the objective was removed"); err != nil {
			return err
		}
	}
	_, err = a.store.AdvanceRollup(ctx, sloAlerts, owner, now)
	return err
}

// evaluatePage evaluates the rules of subjects as of now.
func (a *App) evaluatePage(ctx context.Context, subjects []store.SLOSubject, open map[string]store.SLOAlert, now time.Time) error {
	from := now.Add(-longestRule())
	ids := make([]string, len(subjects))
	for i, s := range subjects {
		ids[i] = s.ID
	}
	hist, err := a.store.StateHistories(ctx, ids, from, now)
	if err != nil {
		return err
	}
	for _, s := range subjects {
		ms := metricsSubject{id: s.ID, created: s.CreatedAt, state: s.State, slo: &s.SLO}
		tl := timeline(ms, hist[s.ID], from)
		burn := func(d time.Duration) metrics.Durations { return tl.Durations(now.Add(-d), now) }
		o := metrics.Objective(s.SLO)
		rule, firing := o.Firing(burn)
		al, isOpen := open[s.ID]
		switch {
		case firing && !isOpen:
			if err := a.openSLOAlert(ctx, s, rule, burn, now); err != nil {
				return err
			}
		case !firing && isOpen:
			if err := a.resolveSLOAlert(ctx, al, &s, now, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// longestRule is the longest window of the burn rules.
func longestRule() time.Duration {
	var d time.Duration
	for _, r := range metrics.BurnRules {
		d = max(d, r.Long, r.Short)
	}
	return d
}

func ruleNamed(name string) metrics.BurnRule {
	for _, r := range metrics.BurnRules {
		if r.Name == name {
			return r
		}
	}
	return metrics.BurnRule{Name: name}
}

// burnData is the data of an slo.burn_rate event about s and rule.
func (a *App) burnData(ctx context.Context, s store.SLOSubject, rule metrics.BurnRule, burn func(time.Duration) metrics.Durations, openedAt, now time.Time) (incident.BurnRateData, error) {
	o := metrics.Objective(s.SLO)
	d := incident.BurnRateData{Rule: rule.Name, LongWindowSeconds: int(rule.Long.Seconds()), ShortWindowSeconds: int(rule.Short.Seconds()),
		Factor: rule.Factor, Target: o.Target, PeriodDays: o.PeriodDays, OpenedAt: openedAt, At: now}
	if rule.Long > 0 {
		d.BurnRateLong, d.BurnRateShort = o.BurnRate(burn(rule.Long)), o.BurnRate(burn(rule.Short))
	}
	figs, err := a.sloFigures(ctx, []metricsSubject{{id: s.ID, created: s.CreatedAt, state: s.State, slo: &s.SLO}}, now)
	if err != nil {
		return d, err
	}
	d.BudgetRemaining = figs[s.ID].Left
	return d, nil
}

// openSLOAlert records s's alert as open and writes its firing event, in
// one transaction.
func (a *App) openSLOAlert(ctx context.Context, s store.SLOSubject, rule metrics.BurnRule, burn func(time.Duration) metrics.Durations, now time.Time) error {
	data, err := a.burnData(ctx, s, rule, burn, now, now)
	if err != nil {
		return err
	}
	data.Status = SLOFiring
	return a.store.InTx(ctx, func(tx *store.Tx) error {
		subj, wsID, ok, err := tx.Subject(ctx, s.ID)
		if err != nil || !ok {
			return err
		}
		opened, err := tx.OpenSLOAlert(ctx, store.SLOAlert{SubjectID: s.ID, WorkspaceID: wsID, Rule: rule.Name, OpenedAt: now})
		if err != nil || !opened {
			return err
		}
		data.Subject = subj
		return a.flow.event(ctx, tx, incident.Event{ID: ids.New(ids.Event, now), Type: incident.SLOBurnRate, CreatedAt: now,
			WorkspaceID: wsID, Data: data}, s.ID, "", []string{s.ID})
	})
}

// resolveSLOAlert closes al and writes its resolved event; s is its
// subject with its objective, nil when it has none any more (reason says
// why). The alert of a deleted subject goes without an event.
func (a *App) resolveSLOAlert(ctx context.Context, al store.SLOAlert, s *store.SLOSubject, now time.Time, reason string) error {
	rule := ruleNamed(al.Rule)
	var data incident.BurnRateData
	if s != nil {
		hist, err := a.store.StateHistories(ctx, []string{s.ID}, now.Add(-longestRule()), now)
		if err != nil {
			return err
		}
		from := now.Add(-longestRule())
		tl := timeline(metricsSubject{id: s.ID, created: s.CreatedAt, state: s.State}, hist[s.ID], from)
		burn := func(d time.Duration) metrics.Durations { return tl.Durations(now.Add(-d), now) }
		if data, err = a.burnData(ctx, *s, rule, burn, al.OpenedAt, now); err != nil {
			return err
		}
	} else {
		data = incident.BurnRateData{Rule: rule.Name, LongWindowSeconds: int(rule.Long.Seconds()), ShortWindowSeconds: int(rule.Short.Seconds()),
			Factor: rule.Factor, OpenedAt: al.OpenedAt, At: now}
	}
	data.Status, data.Reason = SLOResolved, reason
	return a.store.InTx(ctx, func(tx *store.Tx) error {
		closed, err := tx.CloseSLOAlert(ctx, al.SubjectID, al.OpenedAt)
		if err != nil || !closed {
			return err
		}
		subj, wsID, ok, err := tx.Subject(ctx, al.SubjectID)
		if err != nil || !ok {
			return err // deleted: nobody is left to tell
		}
		data.Subject = subj
		return a.flow.event(ctx, tx, incident.Event{ID: ids.New(ids.Event, now), Type: incident.SLOBurnRate, CreatedAt: now,
			WorkspaceID: wsID, Data: data}, al.SubjectID, "", []string{al.SubjectID})
	})
}
