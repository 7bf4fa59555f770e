package statuspage

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Words is how a status reads in a sentence: "operational", "degraded
// performance", "outage", "under maintenance", "no data", "not
// monitored".
func (s Status) Words() string {
	switch s {
	case Operational:
		return "operational"
	case Degraded:
		return "degraded performance"
	case Outage:
		return "outage"
	case UnderMaint:
		return "under maintenance"
	case NotMonitored:
		return "not monitored"
	default:
		return "no data"
	}
}

// Words is the stage as an update's heading says it.
func (s Stage) Words() string {
	switch s {
	case Investigating:
		return "Investigating"
	case Identified:
		return "Identified"
	case Monitoring:
		return "Monitoring"
	case Resolved:
		return "Resolved"
	default:
		return "Update"
	}
}

// Indicator is the page's overall severity, in Atlassian Statuspage's
// words (status.indicator of summary.json) plus "unknown" for a page
// whose components have no data.
type Indicator string

const (
	IndicatorNone        Indicator = "none"
	IndicatorMinor       Indicator = "minor"
	IndicatorMajor       Indicator = "major"
	IndicatorCritical    Indicator = "critical"
	IndicatorMaintenance Indicator = "maintenance"
	IndicatorUnknown     Indicator = "unknown"
)

// Headline is the page's one sentence and its severity.
type Headline struct {
	Status    Status // the worst status of a monitored component (Overall)
	Indicator Indicator
	Sentence  string // "All systems operational", "Partial outage", …
}

// Headline sums the page up in one sentence. Components that are not
// monitored count for nothing; an outage of most monitored components is
// a major outage, of fewer a partial one; open public incidents make an
// otherwise quiet page say so, and active public maintenance too. A page
// with no data for some components never says "operational".
func (p Page) Headline() Headline {
	var monitored, down, noData int
	for _, g := range p.Groups {
		for _, c := range g.Components {
			switch c.Status {
			case NotMonitored:
				continue
			case Outage:
				down++
			case NoData:
				noData++
			}
			monitored++
		}
	}
	worst := p.Overall()
	openIncident := false
	for _, in := range p.Incidents {
		if in.Stage != Resolved && in.ResolvedAt.IsZero() {
			openIncident = true
		}
	}
	activeMaint := false
	for _, m := range p.Maintenance {
		if m.Active {
			activeMaint = true
		}
	}
	h := Headline{Status: worst}
	switch {
	case down > 0 && 2*down > monitored:
		h.Indicator, h.Sentence = IndicatorCritical, "Major outage"
	case down > 0:
		h.Indicator, h.Sentence = IndicatorMajor, "Partial outage"
	case worst == Degraded:
		h.Indicator, h.Sentence = IndicatorMinor, "Degraded performance"
	case openIncident:
		h.Indicator, h.Sentence = IndicatorMinor, "Incident in progress"
	case worst == UnderMaint || activeMaint:
		h.Indicator, h.Sentence = IndicatorMaintenance, "Under maintenance"
	case monitored == 0 || noData == monitored:
		h.Status, h.Indicator, h.Sentence = NoData, IndicatorUnknown, "No data"
	case noData > 0:
		h.Indicator, h.Sentence = IndicatorUnknown, "No data for some systems"
	default:
		h.Indicator, h.Sentence = IndicatorNone, "All systems operational"
	}
	return h
}

// Percent formats an availability (0–1) for readers: at least two and at
// most three decimals, never rounded up (99.9996 % is "99.999 %", not
// "100 %": a figure that hides downtime is a lie).
func Percent(a float64) string {
	if a >= 1 {
		return "100 %"
	}
	if a <= 0 || math.IsNaN(a) {
		return "0 %"
	}
	thousandths := math.Floor(a*100000 + 1e-7) // of a percent
	s := fmt.Sprintf("%.3f", thousandths/1000)
	if strings.HasSuffix(s, "0") {
		s = s[:len(s)-1]
	}
	return s + " %"
}

// Duration says a span in hours and minutes ("1 h 12 min", "under a
// minute").
func Duration(d time.Duration) string {
	if d <= 0 {
		return "0 min"
	}
	if d < time.Minute {
		return "under a minute"
	}
	m := int(d.Round(time.Minute) / time.Minute)
	h, m := m/60, m%60
	switch {
	case h == 0:
		return fmt.Sprintf("%d min", m)
	case m == 0:
		return fmt.Sprintf("%d h", h)
	default:
		return fmt.Sprintf("%d h %d min", h, m)
	}
}

// DayText is a day of a bar in words: the text alternative of its square.
func DayText(d Day) string {
	var b strings.Builder
	b.WriteString(d.Date.UTC().Format("Mon 2 Jan 2006"))
	b.WriteString(": ")
	if d.Availability == nil {
		b.WriteString("no data")
	} else {
		b.WriteString(Percent(*d.Availability))
		b.WriteString(" available")
	}
	if d.Down > 0 {
		b.WriteString(", down " + Duration(d.Down))
	}
	if d.Degraded > 0 {
		b.WriteString(", degraded " + Duration(d.Degraded))
	}
	if d.Maintenance > 0 {
		b.WriteString(", maintenance " + Duration(d.Maintenance))
	}
	b.WriteString(".")
	if len(d.Incidents) > 0 {
		if len(d.Incidents) == 1 {
			b.WriteString(" Incident: ")
		} else {
			b.WriteString(" Incidents: ")
		}
		b.WriteString(strings.Join(d.Incidents, "; "))
		b.WriteString(".")
	}
	return b.String()
}

// DayClass is the colour class of a day's square, by availability.
func DayClass(d Day) string {
	switch {
	case d.Availability == nil && d.Maintenance > 0:
		return "d-maint"
	case d.Availability == nil:
		return "d-none"
	case *d.Availability < 0.95:
		return "d-down"
	case *d.Availability < 0.999 || d.Down > 0:
		return "d-partial"
	case d.Degraded > 0:
		return "d-degraded"
	case d.Maintenance > 0:
		return "d-maint"
	default:
		return "d-ok"
	}
}

// UptimeText is a component's figure over the bar: "99.95 % uptime" or
// "no data".
func UptimeText(u *float64) string {
	if u == nil {
		return "no data"
	}
	return Percent(*u) + " uptime"
}
