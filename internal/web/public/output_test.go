package public_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/tocsin/tocsin/internal/statuspage"
	"github.com/tocsin/tocsin/internal/web/public"
)

// evil is a name an operator (or someone who took over their account)
// could give anything shown on a page.
const evil = `<script>alert("x")</script>'"]]><img src=x onerror=alert(1)>&amp;` + "\x01"

// hostile is the fixture with evil in every text a page shows.
func hostile() statuspage.Page {
	p := fixture()
	p.Title, p.Description = "T"+evil, "D"+evil
	p.FooterLinks = []statuspage.Link{{Label: "L" + evil, URL: "https://acme.example/?q=" + evil}}
	for gi := range p.Groups {
		p.Groups[gi].Name = "G" + evil
		for ci := range p.Groups[gi].Components {
			c := &p.Groups[gi].Components[ci]
			c.Name, c.Description = "C"+evil, "CD"+evil
			for di := range c.Days {
				if c.Days[di].Incidents != nil {
					c.Days[di].Incidents = []string{"DI" + evil}
				}
			}
		}
	}
	for i := range p.Incidents {
		p.Incidents[i].Title = "I" + evil
		for j := range p.Incidents[i].Updates {
			p.Incidents[i].Updates[j].Message = "U" + evil
		}
	}
	for i := range p.Maintenance {
		p.Maintenance[i].Title, p.Maintenance[i].Description = "M"+evil, "MD"+evil
	}
	return p
}

func TestHostileTextIsEscapedEverywhere(t *testing.T) {
	p := hostile()
	page, err := public.RenderPage(p, acme)
	if err != nil {
		t.Fatal(err)
	}
	hist, _ := public.RenderHistory(statuspage.History{Page: p, Incidents: p.Incidents}, acme)
	pw, _ := public.RenderPassword(p, acme, true)
	for name, html := range map[string][]byte{"page": page, "history": hist, "password": pw} {
		for _, raw := range []string{"<script", "<img src=x", `"x")`, "]]>"} {
			if bytes.Contains(html, []byte(raw)) {
				t.Errorf("%s: %q is not escaped", name, raw)
			}
		}
		if !bytes.Contains(html, []byte("T&lt;script&gt;")) {
			t.Errorf("%s: the title is not shown escaped", name)
		}
	}

	js, err := statuspage.SummaryJSON(p, "https://status.example/status/acme")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(js, []byte("<script")) || bytes.Contains(js, []byte("]]>")) {
		t.Error("summary.json carries markup unescaped (it may be sniffed as HTML)")
	}
	var s struct {
		Page      struct{ Name string }
		Incidents []struct {
			Name    string
			Updates []struct{ Body string } `json:"incident_updates"`
		}
	}
	if err := json.Unmarshal(js, &s); err != nil {
		t.Fatalf("summary.json: %v", err)
	}
	if s.Page.Name != p.Title || s.Incidents[0].Name != p.Incidents[0].Title || s.Incidents[0].Updates[0].Body != "U"+evil {
		t.Errorf("summary.json does not carry the text as it is: %+v", s)
	}

	feed, err := public.Feed(p, p.Incidents, "https://status.example/status/acme")
	if err != nil {
		t.Fatal(err)
	}
	f := decodeFeed(t, feed)
	// XML cannot carry \x01: it becomes U+FFFD.
	xmlEvil := strings.ReplaceAll(evil, "\x01", "\uFFFD")
	if f.Title != "T"+xmlEvil+": incidents" || f.Entries[0].Title != "I"+xmlEvil || !strings.Contains(f.Entries[0].Content.Text, "U"+xmlEvil) {
		t.Errorf("the feed does not carry the text as it is: %q / %q / %q", f.Title, f.Entries[0].Title, f.Entries[0].Content.Text)
	}

	c := p.Groups[0].Components[0]
	for _, svg := range [][]byte{public.StateBadge(c), public.Badge(evil, evil, public.BadgeColor(`#fff"/><script>`))} {
		if bytes.Contains(svg, []byte("<script")) {
			t.Errorf("badge carries markup: %s", svg)
		}
		b := decodeBadge(t, svg)
		if !strings.HasSuffix(b.Title, strings.ReplaceAll(evil, "\x01", "\uFFFD")+": operational") && !strings.HasPrefix(b.Title, xmlEvil+": ") {
			t.Errorf("badge title %q", b.Title)
		}
	}
}

func TestSummaryJSONShape(t *testing.T) {
	p := fixture()
	p.Groups = append(p.Groups, statuspage.Group{Components: []statuspage.Component{{ID: "spc_99", Name: "Loose", Status: statuspage.Operational}}})
	b, err := statuspage.SummaryJSON(p, "https://status.example/status/acme")
	if err != nil {
		t.Fatal(err)
	}
	// Stable order: the same page renders the same bytes, keys in Atlassian's order.
	again, _ := statuspage.SummaryJSON(p, "https://status.example/status/acme")
	if !bytes.Equal(b, again) {
		t.Error("two renders of one page differ")
	}
	last := -1
	for _, key := range []string{"page", "components", "incidents", "scheduled_maintenances", "status"} {
		i := bytes.Index(b, []byte("\n  \""+key+"\": "))
		if i <= last {
			t.Errorf("key %s out of order", key)
		}
		last = i
	}
	type comp struct {
		ID         string   `json:"id"`
		Name       string   `json:"name"`
		Status     string   `json:"status"`
		Group      bool     `json:"group"`
		GroupID    *string  `json:"group_id"`
		Components []string `json:"components"`
		Position   int      `json:"position"`
	}
	var s struct {
		Page struct {
			ID, Name, URL string
			TimeZone      string `json:"time_zone"`
			UpdatedAt     string `json:"updated_at"`
		}
		Components []comp
		Incidents  []struct {
			ID, Name, Status, Impact string
			ResolvedAt               *string `json:"resolved_at"`
			Updates                  []struct {
				ID, Status, Body string
				IncidentID       string `json:"incident_id"`
			} `json:"incident_updates"`
			Components []struct{ ID, Status string }
		}
		Maintenance []struct {
			ID, Name, Status string
			ScheduledFor     string `json:"scheduled_for"`
			ScheduledUntil   string `json:"scheduled_until"`
			Components       []struct{ ID string }
		} `json:"scheduled_maintenances"`
		Status struct{ Indicator, Description string }
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	if s.Page.ID != "acme" || s.Page.Name != "Acme Cloud" || s.Page.URL != "https://status.example/status/acme" ||
		s.Page.TimeZone != "Etc/UTC" || s.Page.UpdatedAt != "2026-11-26T09:30:00Z" {
		t.Errorf("page = %+v", s.Page)
	}
	byID := map[string]comp{}
	for i, c := range s.Components {
		byID[c.ID] = c
		if c.Position != i+1 {
			t.Errorf("%s at position %d, want %d", c.ID, c.Position, i+1)
		}
	}
	if len(s.Components) != 3+13 {
		t.Errorf("%d components, want 3 groups and 13 components", len(s.Components))
	}
	for id, want := range map[string]string{
		"spc_01": "operational", "spc_03": "degraded_performance", "spc_05": "major_outage",
		"spc_07": "under_maintenance", "spc_10": "no_data", "spc_12": "not_monitored",
		"group-1": "degraded_performance", "group-2": "partial_outage", "group-3": "no_data",
	} {
		if byID[id].Status != want {
			t.Errorf("%s is %q, want %q", id, byID[id].Status, want)
		}
	}
	if g := byID["group-2"]; !g.Group || g.GroupID != nil || strings.Join(g.Components, ",") != "spc_05,spc_06,spc_07,spc_08" {
		t.Errorf("group-2 = %+v", g)
	}
	if c := byID["spc_06"]; c.Group || c.GroupID == nil || *c.GroupID != "group-2" {
		t.Errorf("spc_06 = %+v", c)
	}
	if c := byID["spc_99"]; c.GroupID != nil {
		t.Errorf("a component shown without a group has group_id %q", *c.GroupID)
	}
	if len(s.Incidents) != 1 {
		t.Fatalf("%d incidents", len(s.Incidents))
	}
	in := s.Incidents[0]
	if in.ID != "inc_01" || in.Status != "identified" || in.Impact != "major" || in.ResolvedAt != nil ||
		len(in.Components) != 1 || in.Components[0].ID != "spc_05" || in.Components[0].Status != "major_outage" {
		t.Errorf("incident = %+v", in)
	}
	if len(in.Updates) != 2 || in.Updates[0].ID != "inc_01-2" || in.Updates[0].Status != "identified" ||
		in.Updates[1].ID != "inc_01-1" || in.Updates[1].IncidentID != "inc_01" {
		t.Errorf("updates (newest first) = %+v", in.Updates)
	}
	if len(s.Maintenance) != 2 || s.Maintenance[0].Status != "in_progress" || s.Maintenance[1].Status != "scheduled" ||
		s.Maintenance[1].ScheduledFor != "2026-11-28T09:30:00Z" || len(s.Maintenance[1].Components) != 2 {
		t.Errorf("maintenance = %+v", s.Maintenance)
	}
	if s.Status.Indicator != "major" || s.Status.Description != "Partial outage" {
		t.Errorf("status = %+v", s.Status)
	}

	// An empty page has empty lists, never null, and no "operational".
	b, _ = statuspage.SummaryJSON(statuspage.Page{Slug: "x"}, "https://s/status/x")
	for _, want := range []string{`"components": []`, `"incidents": []`, `"scheduled_maintenances": []`, `"indicator": "unknown"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("empty page: lacks %s", want)
		}
	}
}

type atomFeed struct {
	XMLName xml.Name `xml:"http://www.w3.org/2005/Atom feed"`
	ID      string   `xml:"id"`
	Title   string   `xml:"title"`
	Updated string   `xml:"updated"`
	Links   []struct {
		Rel  string `xml:"rel,attr"`
		Href string `xml:"href,attr"`
	} `xml:"link"`
	Author struct {
		Name string `xml:"name"`
	} `xml:"author"`
	Entries []struct {
		ID        string `xml:"id"`
		Title     string `xml:"title"`
		Updated   string `xml:"updated"`
		Published string `xml:"published"`
		Link      struct {
			Href string `xml:"href,attr"`
		} `xml:"link"`
		Content struct {
			Type string `xml:"type,attr"`
			Text string `xml:",chardata"`
		} `xml:"content"`
	} `xml:"entry"`
}

// decodeFeed decodes a feed strictly: well-formed XML in the Atom
// namespace, read to its end.
func decodeFeed(t *testing.T, b []byte) atomFeed {
	t.Helper()
	var f atomFeed
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	if err := d.Decode(&f); err != nil {
		t.Fatalf("feed is not well-formed Atom: %v\n%s", err, b)
	}
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if cd, ok := tok.(xml.CharData); err != nil || !ok || len(bytes.TrimSpace(cd)) > 0 {
			t.Fatalf("feed has more after its root: %v %v", tok, err)
		}
	}
	return f
}

func TestFeed(t *testing.T) {
	h := history()
	incidents := append(fixture().Incidents, h.Incidents...)
	url := "https://status.example/status/acme"
	b, err := public.Feed(h.Page, incidents, url)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := public.Feed(h.Page, incidents, url)
	if !bytes.Equal(b, again) {
		t.Error("two renders of one feed differ")
	}
	f := decodeFeed(t, b)
	if f.ID != "tag:status.example,2000:/status/acme" || f.Title != "Acme Cloud: incidents" || f.Author.Name != "Acme Cloud" {
		t.Errorf("feed = %q %q %q", f.ID, f.Title, f.Author.Name)
	}
	if f.Updated != "2026-11-26T09:10:00Z" {
		t.Errorf("feed updated %q, want its newest update", f.Updated)
	}
	if len(f.Links) != 2 || f.Links[0].Rel != "self" || f.Links[0].Href != url+"/history.atom" {
		t.Errorf("links = %+v", f.Links)
	}
	if len(f.Entries) != 2 {
		t.Fatalf("%d entries", len(f.Entries))
	}
	open, past := f.Entries[0], f.Entries[1]
	if open.ID != "tag:status.example,2026-11-26:/status/acme/incidents/inc_01" || open.Title != "REST API returns errors" ||
		open.Updated != "2026-11-26T09:10:00Z" || open.Published != "2026-11-26T07:00:00Z" ||
		open.Link.Href != url+"/history?month=2026-11#inc_01" || open.Content.Type != "text" {
		t.Errorf("open entry = %+v", open)
	}
	if !strings.HasPrefix(open.Content.Text, "Identified (26 Nov 2026, 09:10 UTC): A database node failed.") ||
		!strings.Contains(open.Content.Text, "Investigating (26 Nov 2026, 07:00 UTC): We are investigating") {
		t.Errorf("open entry's content = %q", open.Content.Text)
	}
	if past.Title != "Resolved: Database failover" || past.Updated != "2026-10-21T05:00:00Z" {
		t.Errorf("past entry = %+v", past)
	}

	// No incidents: still a valid feed, updated when the page was rendered.
	b, _ = public.Feed(h.Page, nil, url)
	if f := decodeFeed(t, b); len(f.Entries) != 0 || f.Updated != "2026-11-26T09:30:00Z" {
		t.Errorf("empty feed = %+v", f)
	}
}

type badge struct {
	XMLName   xml.Name `xml:"http://www.w3.org/2000/svg svg"`
	Width     int      `xml:"width,attr"`
	Role      string   `xml:"role,attr"`
	AriaLabel string   `xml:"aria-label,attr"`
	Title     string   `xml:"title"`
	Rects     []struct {
		Fill string `xml:"fill,attr"`
	} `xml:"g>rect"`
	Texts []struct {
		Text string `xml:",chardata"`
	} `xml:"g>text"`
}

func decodeBadge(t *testing.T, b []byte) badge {
	t.Helper()
	var v badge
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	if err := d.Decode(&v); err != nil {
		t.Fatalf("badge is not well-formed SVG: %v\n%s", err, b)
	}
	if v.Role != "img" || v.AriaLabel != v.Title || v.Title == "" {
		t.Errorf("badge role %q, aria-label %q, title %q", v.Role, v.AriaLabel, v.Title)
	}
	return v
}

func TestBadge(t *testing.T) {
	short := decodeBadge(t, public.Badge("api", "up", public.BadgeBrightGreen))
	long := decodeBadge(t, public.Badge("api", "degraded performance", public.BadgeYellow))
	wide := decodeBadge(t, public.Badge("api", "WWWW", public.BadgeYellow))
	narrow := decodeBadge(t, public.Badge("api", "iiii", public.BadgeYellow))
	if short.Title != "api: up" || short.Texts[1].Text != "api" || short.Texts[3].Text != "up" {
		t.Errorf("badge = %+v", short)
	}
	if !(short.Width < long.Width) || !(narrow.Width < wide.Width) {
		t.Errorf("widths: %q %d, %q %d, %q %d, %q %d: the width does not follow the text",
			"up", short.Width, "degraded performance", long.Width, "iiii", narrow.Width, "WWWW", wide.Width)
	}
	// Near shields.io's: "api" + "up" is 48 px wide there (Verdana).
	if short.Width < 44 || short.Width > 52 {
		t.Errorf("api|up is %d px wide", short.Width)
	}
	if got := decodeBadge(t, public.Badge("a", "b", "url(#x)")).Rects[1].Fill; got != string(public.BadgeGrey) {
		t.Errorf("an invalid colour became %q", got)
	}

	c := statuspage.Component{ID: "spc_1", Name: "REST API", Status: statuspage.Outage, Uptime7d: ptr(0.99871)}
	for _, tc := range []struct {
		c           statuspage.Component
		title, fill string
	}{
		{c, "REST API: outage", string(public.BadgeRed)},
		{statuspage.Component{Name: "X", Status: statuspage.Operational}, "X: operational", string(public.BadgeBrightGreen)},
		{statuspage.Component{Name: "X", Status: statuspage.NoData}, "X: no data", string(public.BadgeGrey)},
		{statuspage.Component{Name: "X", Status: statuspage.UnderMaint}, "X: under maintenance", string(public.BadgeBlue)},
	} {
		b := decodeBadge(t, public.StateBadge(tc.c))
		if b.Title != tc.title || b.Rects[1].Fill != tc.fill {
			t.Errorf("StateBadge = %q %s, want %q %s", b.Title, b.Rects[1].Fill, tc.title, tc.fill)
		}
	}
	for window, want := range map[string]string{"7d": "REST API uptime 7d: 99.871 %", "24h": "REST API uptime 24h: no data", "30d": "REST API uptime 30d: no data"} {
		svg, err := public.UptimeBadge(c, window)
		if err != nil {
			t.Fatal(err)
		}
		b := decodeBadge(t, svg)
		wantFill := string(public.BadgeGreen)
		if strings.HasSuffix(want, "no data") {
			wantFill = string(public.BadgeGrey)
		}
		if b.Title != want || b.Rects[1].Fill != wantFill {
			t.Errorf("UptimeBadge(%s) = %q %s, want %q %s", window, b.Title, b.Rects[1].Fill, want, wantFill)
		}
	}
	if _, err := public.UptimeBadge(c, "90d"); !errors.Is(err, public.ErrUnknownWindow) {
		t.Errorf("UptimeBadge(90d) error %v", err)
	}
	if !regexp.MustCompile(`^<svg [^>]*width="` + strconv.Itoa(short.Width) + `"`).Match(public.Badge("api", "up", public.BadgeBrightGreen)) {
		t.Error("the badge does not start with its svg element")
	}
}
