package notify

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
)

// How chat and e-mail kinds tell an event: a note of headline, facts,
// text and list, escaped and cut to each service's limits.

// tone is how an event feels, for the colours, priorities and tags of
// the kinds that have them.
type tone int

const (
	toneInfo tone = iota
	toneAlert
	toneWarn
	toneOK
)

// fact is a labelled value; labels are ours, values user text.
type fact struct{ Label, Value string }

// note is an event as every chat and e-mail kind tells it: a headline,
// facts, a paragraph and a list; all of it user text but the labels.
type note struct {
	typ      string
	eventID  string
	headline string
	facts    []fact
	text     string
	list     []string
	tone     tone
	at       time.Time
	inc      *incident.Incident // incident events
	subject  *incident.Subject  // incident events of a subject, state changes
}

func decode(payload []byte, now time.Time) (note, error) {
	var ev struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		CreatedAt time.Time       `json:"createdAt"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(payload, &ev); err != nil {
		return note{}, fmt.Errorf("the event is not an event object: %w", err)
	}
	if ev.CreatedAt.IsZero() {
		ev.CreatedAt = now
	}
	var (
		n   note
		err error
	)
	switch ev.Type {
	case incident.IncidentOpened, incident.IncidentAcknowledged, incident.IncidentUpdated, incident.IncidentResolved:
		var d incident.IncidentData
		if err = json.Unmarshal(ev.Data, &d); err == nil && d.Incident == nil {
			err = errors.New("no incident")
		}
		if err == nil {
			n = incidentNote(ev.Type, d.Incident)
		}
	case incident.MonitorStateChanged, incident.HeartbeatStateChanged:
		var d incident.StateChangeData
		if err = json.Unmarshal(ev.Data, &d); err == nil {
			n = stateNote(ev.Type, d)
		}
	case incident.SLOBurnRate:
		var d incident.BurnRateData
		if err = json.Unmarshal(ev.Data, &d); err == nil {
			n = burnNote(d)
		}
	case incident.Test:
		var d struct {
			Message string `json:"message"`
			Channel *struct {
				Name string `json:"name"`
			} `json:"channel"`
		}
		if len(ev.Data) > 0 {
			err = json.Unmarshal(ev.Data, &d)
		}
		n = note{headline: "Test notification from Tocsin", text: d.Message}
		if d.Channel != nil && d.Channel.Name != "" {
			n.facts = []fact{{"Channel", d.Channel.Name}}
		}
	case EventHeld:
		var d HeldData
		if err = json.Unmarshal(ev.Data, &d); err == nil {
			n = heldNote(d)
		}
	default:
		return note{}, fmt.Errorf("unknown event type %q", ev.Type)
	}
	if err != nil {
		return note{}, fmt.Errorf("%s data: %w", ev.Type, err)
	}
	n.typ, n.eventID = ev.Type, ev.ID
	if n.at.IsZero() {
		n.at = ev.CreatedAt
	}
	return n, nil
}

var incidentVerbs = map[string]string{
	incident.IncidentOpened:       "Incident opened",
	incident.IncidentAcknowledged: "Incident acknowledged",
	incident.IncidentUpdated:      "Incident updated",
	incident.IncidentResolved:     "Incident resolved",
}

func incidentNote(typ string, inc *incident.Incident) note {
	n := note{headline: incidentVerbs[typ] + ": " + inc.Title, inc: inc, subject: inc.Subject, tone: toneInfo}
	n.facts = append(n.facts, fact{"Status", string(inc.Status)})
	if s := inc.Subject; s != nil {
		n.facts = append(n.facts, fact{capital(s.Type), s.Name})
	}
	if inc.Cause != "" {
		n.facts = append(n.facts, fact{"Cause", inc.Cause})
	}
	n.facts = append(n.facts, fact{"Started", humanTime(inc.StartedAt)})
	switch typ {
	case incident.IncidentOpened:
		n.tone, n.at = toneAlert, inc.StartedAt
	case incident.IncidentAcknowledged:
		if inc.AcknowledgedAt != nil {
			n.at = *inc.AcknowledgedAt
		}
	case incident.IncidentResolved:
		n.tone = toneOK
		if inc.ResolvedAt != nil {
			n.at = *inc.ResolvedAt
			n.facts = append(n.facts, fact{"Lasted", lasted(inc.ResolvedAt.Sub(inc.StartedAt))})
		}
	}
	if len(inc.Updates) > 0 {
		u := inc.Updates[len(inc.Updates)-1]
		if typ == incident.IncidentUpdated {
			n.at = u.At
		}
		if u.Message != inc.Title {
			n.text = u.Message
		}
	}
	return n
}

func stateNote(typ string, d incident.StateChangeData) note {
	subj := d.Subject
	if subj.Type == "" {
		subj.Type = strings.TrimSuffix(typ, ".state_changed")
	}
	n := note{headline: capital(subj.Type) + " " + subj.Name + " is " + string(d.To), subject: &subj, at: d.At}
	state := string(d.To)
	if d.From != "" {
		state = string(d.From) + " → " + state
	}
	n.facts = append(n.facts, fact{"State", state})
	if d.Cause != "" {
		n.facts = append(n.facts, fact{"Cause", d.Cause})
	}
	n.facts = append(n.facts, fact{"At", humanTime(d.At)})
	switch d.To {
	case monitor.StateDown:
		n.tone = toneAlert
	case monitor.StateDegraded, monitor.StateUnknown:
		n.tone = toneWarn
	case monitor.StateUp:
		n.tone = toneOK
	}
	return n
}

// burnNote tells an objective's burn-rate alert firing or resolved.
func burnNote(d incident.BurnRateData) note {
	subj := d.Subject
	n := note{subject: &subj, at: d.At, tone: toneAlert,
		headline: capital(subj.Type) + " " + subj.Name + " is burning its error budget (" + d.Rule + ")"}
	if d.Status == "resolved" {
		n.tone, n.headline = toneOK, capital(subj.Type)+" "+subj.Name+" no longer burns its error budget too fast"
	}
	if d.Target > 0 {
		n.facts = append(n.facts, fact{"Objective", fmt.Sprintf("%s%% over %d days", strconv.FormatFloat(math.Round(d.Target*1e9)/1e7, 'f', -1, 64), d.PeriodDays)})
	}
	window := func(s int) string {
		switch {
		case s > 0 && s%3600 == 0:
			return strconv.Itoa(s/3600) + "h"
		case s > 0 && s%60 == 0:
			return strconv.Itoa(s/60) + "m"
		}
		return strconv.Itoa(s) + "s"
	}
	n.facts = append(n.facts, fact{"Rule", fmt.Sprintf("%s: %s and %s at %s×", d.Rule, window(d.LongWindowSeconds),
		window(d.ShortWindowSeconds), strconv.FormatFloat(d.Factor, 'f', -1, 64))})
	rate := func(r *float64) string {
		if r == nil {
			return "unknown"
		}
		return strconv.FormatFloat(*r, 'f', 1, 64) + "×"
	}
	n.facts = append(n.facts, fact{"Burn rate", fmt.Sprintf("%s over %s, %s over %s", rate(d.BurnRateLong), window(d.LongWindowSeconds),
		rate(d.BurnRateShort), window(d.ShortWindowSeconds))})
	if d.BudgetRemaining != nil {
		n.facts = append(n.facts, fact{"Budget left", strconv.FormatFloat(*d.BudgetRemaining*100, 'f', 1, 64) + "%"})
	}
	if d.Status == "resolved" {
		n.facts = append(n.facts, fact{"Lasted", lasted(d.At.Sub(d.OpenedAt))})
	}
	n.text = d.Reason
	return n
}

func heldNote(d HeldData) note {
	noun := "notifications"
	if d.Count == 1 {
		noun = "notification"
	}
	n := note{headline: fmt.Sprintf("%d %s held back", d.Count, noun), tone: toneWarn, at: d.To}
	n.text = fmt.Sprintf("This channel's rate limit held back %d %s from %s to %s. Tocsin's deliveries list shows them.",
		d.Count, noun, humanTime(d.From), humanTime(d.To))
	types := make([]string, 0, len(d.ByType))
	for t := range d.ByType {
		types = append(types, t)
	}
	slices.Sort(types)
	for i, t := range types {
		types[i] = fmt.Sprintf("%s ×%d", t, d.ByType[t])
	}
	if len(types) > 0 {
		n.facts = append(n.facts, fact{"Events", strings.Join(types, ", ")})
	}
	n.list = d.Titles
	if len(n.list) > listMax {
		n.list = append(slices.Clip(d.Titles[:listMax]), fmt.Sprintf("and %d more", len(d.Titles)-listMax))
	}
	return n
}

func capital(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func humanTime(t time.Time) string { return t.UTC().Format(humanLayout) }

// lasted is d to the second, without zero tails: 1h5m, not 1h5m0s.
func lasted(d time.Duration) string {
	s := d.Round(time.Second).String()
	for _, tail := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, tail) {
			s = s[:len(s)-2]
		}
	}
	return s
}

// render is the note written in markup m within max as size measures it
// (max < 0: no limit).
func (n note) render(m markup, headline bool, max int, size func(string) int) string {
	return assemble(n.pieces(m, headline), m.esc, max, size)
}

// plainText is text with no markup, for e-mail and ntfy.
var plainText = markup{esc: plain, bold: plain, bullet: "- "}

// markup is how a kind writes bold text and list items.
type markup struct {
	esc    func(string) string // user text
	bold   func(string) string // of escaped text
	bullet string
}

// piece is part of a message: markup, kept whole or dropped, or user
// text, escaped and cut to fit.
type piece struct {
	s    string
	user bool
}

// pieces lays the note out: headline, facts, paragraph, list, each
// user value first cut to a size that keeps one from crowding out the
// rest.
func (n note) pieces(m markup, headline bool) []piece {
	var ps []piece
	if headline {
		ps = append(ps, piece{m.bold(m.esc(cut(n.headline, headlineMax))) + "\n", false})
	}
	for _, f := range n.facts {
		ps = append(ps, piece{m.bold(m.esc(f.Label+":")) + " ", false}, piece{cut(f.Value, valueMax), true}, piece{"\n", false})
	}
	if n.text != "" {
		ps = append(ps, piece{"\n", false}, piece{cut(n.text, textMax), true}, piece{"\n", false})
	}
	if len(n.list) > 0 {
		ps = append(ps, piece{"\n", false})
	}
	for _, item := range n.list {
		ps = append(ps, piece{m.bullet, false}, piece{cut(item, listItemMax), true}, piece{"\n", false})
	}
	return ps
}

func plain(s string) string { return s }

// assemble joins pieces, escaping the user text with esc, within max as
// size measures it (max < 0: no limit). What does not fit is cut at a
// rune boundary, never inside an escape or markup, and ends in "…".
func assemble(ps []piece, esc func(string) string, max int, size func(string) int) string {
	var b strings.Builder
	for _, p := range ps {
		if p.user {
			b.WriteString(esc(p.s))
		} else {
			b.WriteString(p.s)
		}
	}
	if full := strings.TrimRight(b.String(), "\n"); max < 0 || size(full) <= max {
		return full
	}
	b.Reset()
	left := max - size(ellipsis)
	for _, p := range ps {
		s := p.s
		if p.user {
			s = esc(s)
		}
		if n := size(s); n <= left {
			b.WriteString(s)
			left -= n
			continue
		}
		if p.user {
			for _, r := range p.s {
				e := esc(string(r))
				if size(e) > left {
					break
				}
				b.WriteString(e)
				left -= size(e)
			}
		}
		break
	}
	return b.String() + ellipsis
}

// units counts UTF-16 code units, how JavaScript-built services count
// characters; never fewer than the code points.
func units(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// cut shortens s to at most max UTF-16 units at a rune boundary, ending
// in "…" when it cut.
func cut(s string, max int) string {
	if units(s) <= max {
		return s
	}
	return assemble([]piece{{s, true}}, plain, max, units)
}

// angle escapes what Slack's mrkdwn and Telegram's HTML mode take for
// markup: &, < and >.
var angle = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace

// discordEsc backslash-escapes what Discord's markdown makes formatting,
// masked links ([text](url)) or mentions (<@id>, @everyone) of.
func discordEsc(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune("\\*_~`|<>[]#@", r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
