package public

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// serveFeed answers /history.atom: the page's incidents as a feed.
func (p *Pages) serveFeed(w http.ResponseWriter, r *http.Request, pg *page, base, cache string) error {
	return p.sendView(w, r, pg, "atom|"+base, cache, func(v app.StatusView, c app.PublicPageConfig) ([]byte, string, error) {
		b, err := Feed(v.Page, v.Recent, p.pageURL(r, base))
		return b, "application/atom+xml; charset=utf-8", err
	})
}

// Feed renders an Atom 1.0 feed (RFC 4287) of a page's incidents: an
// entry per incident, newest first as given, whose text content lists
// its updates newest first. pageURL is the page's absolute URL.
//
// Ids are tag URIs (RFC 4151) that stay the same as long as the page's
// host and path do: the feed's is "tag:<host>,2000:<path>", an entry's
// "tag:<host>,<day it started>:<path>/incidents/<incident id>". An
// entry's updated is its latest update; the feed's the latest of its
// entries (the page's render time when there are none), so an unchanged
// history renders the same bytes.
func Feed(p statuspage.Page, incidents []statuspage.Incident, pageURL string) ([]byte, error) {
	host, path := tagParts(pageURL)
	f := atomFeed{
		NS:    "http://www.w3.org/2005/Atom",
		ID:    "tag:" + host + ",2000:" + path,
		Title: p.Title + ": incidents",
		Links: []atomLink{
			{Rel: "self", Type: "application/atom+xml", Href: pageURL + "/history.atom"},
			{Rel: "alternate", Type: "text/html", Href: pageURL},
		},
		Author:    atomPerson{Name: p.Title},
		Generator: "Tocsin",
	}
	var latest time.Time
	for _, in := range incidents {
		up := in.LastUpdate()
		if up.After(latest) {
			latest = up
		}
		title := in.Title
		if in.Stage == statuspage.Resolved || !in.ResolvedAt.IsZero() {
			title = "Resolved: " + title
		}
		f.Entries = append(f.Entries, atomEntry{
			ID:        "tag:" + host + "," + in.StartedAt.UTC().Format("2006-01-02") + ":" + path + "/incidents/" + in.ID,
			Title:     title,
			Published: stamp(in.StartedAt),
			Updated:   stamp(up),
			Link: atomLink{Rel: "alternate", Type: "text/html",
				Href: pageURL + "/history?month=" + in.StartedAt.UTC().Format("2006-01") + "#" + url.PathEscape(in.ID)},
			Content: atomText{Type: "text", Text: updatesText(in)},
		})
	}
	if latest.IsZero() {
		latest = p.GeneratedAt
	}
	f.Updated = stamp(latest)
	b, err := xml.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("statuspage: feed: %w", err)
	}
	return append(append([]byte(xml.Header), b...), '\n'), nil
}

// updatesText is an incident's updates as plain text, newest first.
func updatesText(in statuspage.Incident) string {
	var b strings.Builder
	for i, u := range newestFirst(in.Updates) {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(u.Stage.Words() + " (" + u.At.UTC().Format("2 Jan 2006, 15:04 UTC") + "): " + u.Message)
	}
	if b.Len() == 0 {
		b.WriteString(in.Title)
	}
	return b.String()
}

// tagParts is the authority and path of a tag URI naming the page.
func tagParts(pageURL string) (host, path string) {
	u, err := url.Parse(pageURL)
	if err != nil || u.Hostname() == "" {
		return "localhost", "/"
	}
	path = u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return u.Hostname(), path
}

type atomFeed struct {
	XMLName   xml.Name    `xml:"feed"`
	NS        string      `xml:"xmlns,attr"`
	ID        string      `xml:"id"`
	Title     string      `xml:"title"`
	Updated   string      `xml:"updated"`
	Links     []atomLink  `xml:"link"`
	Author    atomPerson  `xml:"author"`
	Generator string      `xml:"generator"`
	Entries   []atomEntry `xml:"entry"`
}

type atomLink struct {
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomPerson struct {
	Name string `xml:"name"`
}

type atomEntry struct {
	ID        string   `xml:"id"`
	Title     string   `xml:"title"`
	Published string   `xml:"published"`
	Updated   string   `xml:"updated"`
	Link      atomLink `xml:"link"`
	Content   atomText `xml:"content"`
}

type atomText struct {
	Type string `xml:"type,attr"`
	Text string `xml:",chardata"`
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }
