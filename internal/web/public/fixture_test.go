package public_test

import (
	"fmt"
	"time"

	"github.com/tocsin/tocsin/internal/statuspage"
)

// now is the fixture's render time.
var now = time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)

func ptr(f float64) *float64 { return &f }

// fixture is a realistic page: three groups, twelve components in every
// state, 90 days with down, degraded, maintenance and empty days, an
// open incident and a scheduled maintenance.
func fixture() statuspage.Page {
	type spec struct {
		name, desc string
		status     statuspage.Status
	}
	groups := []struct {
		name  string
		comps []spec
	}{
		{"Website", []spec{
			{"Marketing site", "", statuspage.Operational},
			{"Sign-in", "Accounts, single sign-on and passwords.", statuspage.Operational},
			{"Dashboard", "", statuspage.Degraded},
			{"Documentation", "", statuspage.Operational},
		}},
		{"API", []spec{
			{"REST API", "The public API at version 1.", statuspage.Outage},
			{"Webhooks", "", statuspage.Operational},
			{"Search", "", statuspage.UnderMaint},
			{"File uploads", "", statuspage.Operational},
		}},
		{"Background jobs", []spec{
			{"Nightly export", "", statuspage.Operational},
			{"Invoice run", "", statuspage.NoData},
			{"Email delivery", "", statuspage.Operational},
			{"Legacy importer", "", statuspage.NotMonitored},
		}},
	}
	p := statuspage.Page{
		Slug:        "acme",
		Title:       "Acme Cloud",
		Description: "Live status of Acme Cloud's services.",
		Accent:      "#8250df",
		ShowUptime:  true,
		BarDays:     90,
		GeneratedAt: now,
		FooterLinks: []statuspage.Link{
			{Label: "Acme home", URL: "https://acme.example/"},
			{Label: "Support", URL: "https://acme.example/support"},
		},
	}
	n := 0
	for gi, g := range groups {
		grp := statuspage.Group{Name: g.name}
		for ci, c := range g.comps {
			n++
			comp := statuspage.Component{
				ID:          fmt.Sprintf("spc_%02d", n),
				Name:        c.name,
				Description: c.desc,
				Status:      c.status,
				Uptime:      ptr(0.9995 - float64(gi*4+ci)*0.0007),
				Uptime24h:   ptr(1),
				Uptime7d:    ptr(0.99871),
				Uptime30d:   ptr(0.9995),
			}
			if c.status == statuspage.NoData {
				comp.Uptime, comp.Uptime24h, comp.Uptime7d, comp.Uptime30d = nil, nil, nil, nil
			}
			start := now.Truncate(24*time.Hour).AddDate(0, 0, -89)
			for d := range 90 {
				day := statuspage.Day{Date: start.AddDate(0, 0, d), Availability: ptr(1)}
				switch {
				case c.status == statuspage.NoData,
					n == 12 && d > 60, // paused a month ago
					n == 6 && d < 20:  // created 70 days ago
					day.Availability = nil
				case (d+n)%29 == 0:
					day.Availability, day.Down = ptr(0.9861), 20*time.Minute
					day.Incidents = []string{"Elevated error rates"}
				case (d*n)%37 == 5:
					day.Availability, day.Degraded = ptr(1), 95*time.Minute
				case (d+2*n)%43 == 0:
					day.Maintenance = 2 * time.Hour
				case d == 70 && n == 5:
					day.Availability, day.Down = ptr(0.5), 12*time.Hour
					day.Incidents = []string{"API unavailable", "Database failover"}
				}
				if d == 89 && c.status == statuspage.Outage {
					day.Availability, day.Down = ptr(0.8958), 2*time.Hour+30*time.Minute
					day.Incidents = []string{"REST API returns errors"}
				}
				comp.Days = append(comp.Days, day)
			}
			grp.Components = append(grp.Components, comp)
		}
		p.Groups = append(p.Groups, grp)
	}
	p.Incidents = []statuspage.Incident{{
		ID:           "inc_01",
		Title:        "REST API returns errors",
		Stage:        statuspage.Identified,
		StartedAt:    now.Add(-150 * time.Minute),
		UpdatedAt:    now.Add(-20 * time.Minute),
		ComponentIDs: []string{"spc_05"},
		Updates: []statuspage.Update{
			{Stage: statuspage.Investigating, Message: "We are investigating errors on the REST API.", At: now.Add(-150 * time.Minute)},
			{Stage: statuspage.Identified, Message: "A database node failed. We are moving traffic to a replica.\nWrites may fail until then.", At: now.Add(-20 * time.Minute)},
		},
	}}
	p.Maintenance = []statuspage.Maintenance{
		{
			ID: "mw_01", Title: "Search index rebuild", Active: true,
			StartsAt: now.Add(-time.Hour), EndsAt: now.Add(time.Hour),
			Description:  "Search results may be incomplete.",
			ComponentIDs: []string{"spc_07"},
		},
		{
			ID: "mw_02", Title: "Database upgrade",
			StartsAt: now.Add(48 * time.Hour), EndsAt: now.Add(50 * time.Hour),
			Description:  "The API will be read-only for up to two hours.",
			ComponentIDs: []string{"spc_05", "spc_06"},
		},
	}
	return p
}

// history is a month of past incidents for the fixture page.
func history() statuspage.History {
	p := fixture()
	month := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	return statuspage.History{
		Page:  p,
		Month: month,
		Older: time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC),
		Newer: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC),
		Incidents: []statuspage.Incident{
			{
				ID: "inc_00", Title: "Database failover", Stage: statuspage.Resolved,
				StartedAt: month.AddDate(0, 0, 20).Add(3 * time.Hour), ResolvedAt: month.AddDate(0, 0, 20).Add(5 * time.Hour),
				UpdatedAt: month.AddDate(0, 0, 20).Add(5 * time.Hour),
				Updates: []statuspage.Update{
					{Stage: statuspage.Investigating, Message: "The API is unavailable.", At: month.AddDate(0, 0, 20).Add(3 * time.Hour)},
					{Stage: statuspage.Monitoring, Message: "Traffic moved to the replica.", At: month.AddDate(0, 0, 20).Add(4 * time.Hour)},
					{Stage: statuspage.Resolved, Message: "The API works normally again.", At: month.AddDate(0, 0, 20).Add(5 * time.Hour)},
				},
			},
		},
	}
}
