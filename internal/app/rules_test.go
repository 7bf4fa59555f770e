package app

// One set of rules: every limit the API's schema states is enforced here,
// where the web app (and anything else calling app) passes too. Each case
// calls app directly, with no HTTP and no schema in front, with a draft
// that is valid but for one limit, and wants the one field error.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/recur"
	"github.com/tocsin/tocsin/internal/store/storetest"
)

// newRulesApp is an app on a fresh database of eng, with e-mail enabled so
// that e-mail channels reach their own rules, and an owner actor.
func newRulesApp(t *testing.T, eng storetest.Engine) (*App, Actor) {
	a, actor, _ := newTestApp(t, eng, Config{EmailEnabled: true})
	return a, actor
}

// over is a string one past n: in runes for the limits counted in
// characters (é is two bytes), in bytes for those counted in bytes.
func over(n int) string      { return strings.Repeat("é", n+1) }
func overBytes(n int) string { return strings.Repeat("a", n+1) }

// requireField wants a validation error that names ptr among others (a
// rule whose breach necessarily breaks another, or a list whose entries
// are each also unknown).
func requireField(t *testing.T, err error, ptr string) {
	t.Helper()
	var e *errs.Error
	if !errors.As(err, &e) || e.Kind != errs.KindInvalid {
		t.Fatalf("error %v, want a KindInvalid *errs.Error", err)
	}
	for _, f := range e.Fields {
		if f.Pointer == ptr {
			return
		}
	}
	t.Errorf("%d fields, none at %s (first %v)", len(e.Fields), ptr, e.Fields[0])
}

func list(n int, f func(i int) string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = f(i)
	}
	return out
}

func TestRules(t *testing.T) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			a, actor := newRulesApp(t, eng)
			t.Run("monitors", func(t *testing.T) { rulesMonitors(t, a, actor) })
			t.Run("heartbeats", func(t *testing.T) { rulesHeartbeats(t, a, actor) })
			t.Run("incidents", func(t *testing.T) { rulesIncidents(t, a, actor) })
			t.Run("maintenance", func(t *testing.T) { rulesMaintenance(t, a, actor) })
			t.Run("channels", func(t *testing.T) { rulesChannels(t, a, actor) })
		})
	}
}

func rulesMonitors(t *testing.T, a *App, actor Actor) {
	ctx := context.Background()
	base := func(typ monitor.Type) monitor.Draft {
		d := monitor.Draft{Type: typ, Name: "api", IntervalSeconds: 60}
		switch typ {
		case monitor.TypeHTTP:
			d.Config.URL = "https://example.com/health"
		case monitor.TypeTCP:
			d.Config.Host, d.Config.Port = "example.com", 5432
		case monitor.TypeDNS:
			d.Config.RecordName = "example.com"
		case monitor.TypeTLS:
			d.Config.Host = "example.com"
		}
		return d
	}
	keywords := func(n int) []monitor.KeywordAssertion {
		out := make([]monitor.KeywordAssertion, n)
		for i := range out {
			out[i] = monitor.KeywordAssertion{Keyword: fmt.Sprint("k", i), Present: true}
		}
		return out
	}
	jsons := func(n int) []monitor.JSONAssertion {
		out := make([]monitor.JSONAssertion, n)
		for i := range out {
			out[i] = monitor.JSONAssertion{Path: "$.ok", Operator: monitor.OpExists}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		typ   monitor.Type
		spoil func(*monitor.Draft)
		ptr   string
	}{
		{"type", "ftp", func(d *monitor.Draft) {}, "/type"},
		{"name empty", monitor.TypeHTTP, func(d *monitor.Draft) { d.Name = " " }, "/name"},
		{"name length", monitor.TypeHTTP, func(d *monitor.Draft) { d.Name = over(monitor.MaxNameLen) }, "/name"},
		{"interval low", monitor.TypeHTTP, func(d *monitor.Draft) { d.IntervalSeconds = monitor.MinIntervalSeconds - 1 }, "/intervalSeconds"},
		{"interval high", monitor.TypeHTTP, func(d *monitor.Draft) { d.IntervalSeconds = monitor.MaxIntervalSeconds + 1 }, "/intervalSeconds"},
		{"url length", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.URL = "https://example.com/" + overBytes(monitor.MaxURLLen-len("https://example.com/"))
		}, "/config/url"},
		{"method", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Method = "TRACE" }, "/config/method"},
		{"body length", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Body = overBytes(monitor.MaxBodyLen) }, "/config/body"},
		{"timeout high", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.TimeoutSeconds = monitor.MaxTimeoutSeconds + 1 }, "/config/timeoutSeconds"},
		{"timeout low", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.TimeoutSeconds = -1 }, "/config/timeoutSeconds"},
		{"status codes count", monitor.TypeHTTP, func(d *monitor.Draft) {
			for range monitor.MaxStatusCodes + 1 {
				d.Config.ExpectedStatusCodes = append(d.Config.ExpectedStatusCodes, monitor.StatusRange{From: 200, To: 204})
			}
		}, "/config/expectedStatusCodes"},
		{"status code range", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.ExpectedStatusCodes = []monitor.StatusRange{{From: monitor.MaxStatusCode + 1, To: monitor.MaxStatusCode + 1}}
		}, "/config/expectedStatusCodes/0"},
		{"keyword count", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.KeywordAssertions = keywords(monitor.MaxAssertions + 1) }, "/config/keywordAssertions"},
		{"keyword length", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.KeywordAssertions = []monitor.KeywordAssertion{{Keyword: overBytes(monitor.MaxKeywordLen)}}
		}, "/config/keywordAssertions/0/keyword"},
		{"json count", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.JSONAssertions = jsons(monitor.MaxAssertions + 1) }, "/config/jsonAssertions"},
		{"json path length", monitor.TypeHTTP, func(d *monitor.Draft) {
			d.Config.JSONAssertions = []monitor.JSONAssertion{{Path: "$." + overBytes(monitor.MaxJSONPathLen-2), Operator: monitor.OpExists}}
		}, "/config/jsonAssertions/0/path"},
		{"degraded latency", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.DegradedLatencyMs = -1 }, "/config/degradedLatencyMs"},
		{"confirmations", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Confirmations = monitor.MaxConfirmations + 1 }, "/config/confirmations"},
		{"recoveries", monitor.TypeHTTP, func(d *monitor.Draft) { d.Config.Recoveries = monitor.MaxConfirmations + 1 }, "/config/recoveries"},
		{"host length", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Host = overBytes(monitor.MaxHostLen) }, "/config/host"},
		{"port", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Port = monitor.MaxPort + 1 }, "/config/port"},
		{"send length", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Send = overBytes(monitor.MaxBodyLen) }, "/config/send"},
		{"expect length", monitor.TypeTCP, func(d *monitor.Draft) { d.Config.Expect = overBytes(monitor.MaxKeywordLen) }, "/config/expect"},
		{"record name length", monitor.TypeDNS, func(d *monitor.Draft) { d.Config.RecordName = overBytes(monitor.MaxHostLen) }, "/config/recordName"},
		{"record type", monitor.TypeDNS, func(d *monitor.Draft) { d.Config.RecordType = "BOGUS" }, "/config/recordType"},
		{"expected values count", monitor.TypeDNS, func(d *monitor.Draft) {
			d.Config.ExpectedValues = list(monitor.MaxExpectedValues+1, func(i int) string { return fmt.Sprint("10.0.0.", i) })
		}, "/config/expectedValues"},
		{"server name length", monitor.TypeTLS, func(d *monitor.Draft) { d.Config.ServerName = overBytes(monitor.MaxHostLen) }, "/config/serverName"},
		{"down expiry days", monitor.TypeTLS, func(d *monitor.Draft) { d.Config.DownExpiryDays = -1 }, "/config/downExpiryDays"},
		{"degraded expiry days", monitor.TypeTLS, func(d *monitor.Draft) { d.Config.DegradedExpiryDays = monitor.MaxExpiryDays + 1 }, "/config/degradedExpiryDays"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := base(tc.typ)
			if tc.typ == "ftp" {
				d = base(monitor.TypeHTTP)
				d.Type, d.Config.URL = "ftp", ""
			}
			tc.spoil(&d)
			_, err := a.CreateMonitor(ctx, actor, d)
			requireInvalid(t, err, tc.ptr)
		})
	}
	t.Run("valid base drafts are accepted", func(t *testing.T) {
		for _, typ := range monitor.Types {
			if _, err := a.CreateMonitor(ctx, actor, base(typ)); err != nil {
				t.Errorf("%s: %v", typ, err)
			}
		}
	})
	t.Run("down expiry days high", func(t *testing.T) {
		d := base(monitor.TypeTLS)
		d.Config.DownExpiryDays = monitor.MaxExpiryDays + 1 // degradedExpiryDays cannot be at least that and in range
		_, err := a.CreateMonitor(ctx, actor, d)
		requireField(t, err, "/config/downExpiryDays")
	})
	t.Run("update", func(t *testing.T) {
		m, err := a.CreateMonitor(ctx, actor, base(monitor.TypeHTTP))
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.UpdateMonitor(ctx, actor, m.ID, func(cur monitor.Monitor) (MonitorChange, error) {
			d := monitor.Draft{Type: cur.Type, Name: over(monitor.MaxNameLen), Config: cur.Config, IntervalSeconds: cur.IntervalSeconds}
			return MonitorChange{Draft: d}, nil
		})
		requireInvalid(t, err, "/name")
	})
}

func rulesHeartbeats(t *testing.T, a *App, actor Actor) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		spoil func(*heartbeat.Draft)
		ptr   string
	}{
		{"name empty", func(d *heartbeat.Draft) { d.Name = "" }, "/name"},
		{"name length", func(d *heartbeat.Draft) { d.Name = over(monitor.MaxNameLen) }, "/name"},
		{"period low", func(d *heartbeat.Draft) { d.Schedule.PeriodSeconds = heartbeat.MinPeriodSeconds - 1 }, "/schedule/periodSeconds"},
		{"period high", func(d *heartbeat.Draft) { d.Schedule.PeriodSeconds = heartbeat.MaxPeriodSeconds + 1 }, "/schedule/periodSeconds"},
		{"cron length", func(d *heartbeat.Draft) {
			d.Schedule.PeriodSeconds, d.Schedule.Cron = 0, "0 2 * * "+overBytes(recur.MaxCronLen)
		}, "/schedule/cron"},
		{"timezone length", func(d *heartbeat.Draft) {
			d.Schedule.PeriodSeconds, d.Schedule.Cron, d.Schedule.Timezone = 0, "0 2 * * *", overBytes(recur.MaxZoneLen)
		}, "/schedule/timezone"},
		{"grace high", func(d *heartbeat.Draft) { d.Schedule.GraceSeconds = heartbeat.MaxGraceSeconds + 1 }, "/schedule/graceSeconds"},
		{"grace negative", func(d *heartbeat.Draft) { d.Schedule.GraceSeconds = -1 }, "/schedule/graceSeconds"},
		{"max runtime high", func(d *heartbeat.Draft) { d.MaxRuntimeSeconds = heartbeat.MaxRuntimeLimitSeconds + 1 }, "/maxRuntimeSeconds"},
		{"max runtime negative", func(d *heartbeat.Draft) { d.MaxRuntimeSeconds = -1 }, "/maxRuntimeSeconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := heartbeat.Draft{Name: "nightly", Schedule: heartbeat.Schedule{PeriodSeconds: 3600}}
			tc.spoil(&d)
			_, err := a.CreateHeartbeat(ctx, actor, d)
			requireInvalid(t, err, tc.ptr)
		})
	}
	t.Run("update", func(t *testing.T) {
		h, err := a.CreateHeartbeat(ctx, actor, heartbeat.Draft{Name: "nightly", Schedule: heartbeat.Schedule{PeriodSeconds: 3600}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.UpdateHeartbeat(ctx, actor, h.ID, func(cur heartbeat.Heartbeat) (heartbeat.Draft, error) {
			return heartbeat.Draft{Name: cur.Name, Schedule: cur.Schedule, MaxRuntimeSeconds: heartbeat.MaxRuntimeLimitSeconds + 1}, nil
		})
		requireInvalid(t, err, "/maxRuntimeSeconds")
	})
}

func rulesIncidents(t *testing.T, a *App, actor Actor) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		spoil func(*IncidentDraft)
		ptr   string
	}{
		{"title empty", func(d *IncidentDraft) { d.Title = " " }, "/title"},
		{"title length", func(d *IncidentDraft) { d.Title = over(incident.MaxTitleLen) }, "/title"},
		{"status", func(d *IncidentDraft) { d.Status = incident.Resolved }, "/status"},
		{"message empty", func(d *IncidentDraft) { d.Message = "" }, "/message"},
		{"message length", func(d *IncidentDraft) { d.Message = over(incident.MaxMessageLen) }, "/message"},
		{"affected count", func(d *IncidentDraft) {
			d.AffectedMonitors = list(incident.MaxAffected+1, func(i int) string { return fmt.Sprint("mon_", i) })
		}, "/affectedMonitors"},
		{"affected id", func(d *IncidentDraft) { d.AffectedMonitors = []string{"nch_1"} }, "/affectedMonitors/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := IncidentDraft{Title: "Checkout is slow", Message: "Looking into it."}
			tc.spoil(&d)
			_, err := a.CreateIncident(ctx, actor, d)
			requireInvalid(t, err, tc.ptr)
		})
	}
	inc, err := a.CreateIncident(ctx, actor, IncidentDraft{Title: "Checkout is slow", Message: "Looking into it."})
	if err != nil {
		t.Fatal(err)
	}
	long := over(incident.MaxTitleLen)
	_, err = a.UpdateIncident(ctx, actor, inc.ID, IncidentPatch{Title: &long})
	requireInvalid(t, err, "/title")
	many := list(incident.MaxAffected+1, func(i int) string { return fmt.Sprint("hb_", i) })
	_, err = a.UpdateIncident(ctx, actor, inc.ID, IncidentPatch{AffectedMonitors: &many})
	requireInvalid(t, err, "/affectedMonitors")
	_, err = a.PostIncidentUpdate(ctx, actor, inc.ID, incident.Identified, over(incident.MaxMessageLen))
	requireInvalid(t, err, "/message")
	_, err = a.PostIncidentUpdate(ctx, actor, inc.ID, "fixed", "Done.")
	requireInvalid(t, err, "/status")
	_, err = a.ResolveIncident(ctx, actor, inc.ID, over(incident.MaxMessageLen))
	requireInvalid(t, err, "/message")
}

func rulesMaintenance(t *testing.T, a *App, actor Actor) {
	ctx := context.Background()
	start := time.Now().Add(time.Hour).UTC().Truncate(time.Minute)
	m, err := a.CreateMonitor(ctx, actor, monitor.Draft{Type: monitor.TypeHTTP, Name: "api", Config: monitor.Config{URL: "https://example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	recurring := func(d *MaintenanceDraft) *Recurrence {
		d.EndsAt = time.Time{}
		d.Recurrence = &Recurrence{Cron: "0 2 * * 6", Duration: time.Hour}
		return d.Recurrence
	}
	for _, tc := range []struct {
		name  string
		spoil func(*MaintenanceDraft)
		ptr   string
	}{
		{"name empty", func(d *MaintenanceDraft) { d.Name = "" }, "/name"},
		{"name length", func(d *MaintenanceDraft) { d.Name = over(MaxMaintenanceName) }, "/name"},
		{"description length", func(d *MaintenanceDraft) { d.Description = over(MaxMaintenanceDescription) }, "/description"},
		{"monitors count", func(d *MaintenanceDraft) {
			d.MonitorIDs = list(MaxMaintenanceSubjects+1, func(i int) string { return fmt.Sprint("mon_", i) })
		}, "/monitorIds"},
		{"heartbeats count", func(d *MaintenanceDraft) {
			d.HeartbeatIDs = list(MaxMaintenanceSubjects+1, func(i int) string { return fmt.Sprint("hb_", i) })
		}, "/heartbeatIds"},
		{"one-off length", func(d *MaintenanceDraft) { d.EndsAt = d.StartsAt.Add(MaxOneOffMaintenance + time.Minute) }, "/endsAt"},
		{"duration", func(d *MaintenanceDraft) { recurring(d).Duration = recur.MaxRecurringDuration + time.Minute }, "/recurrence/durationMinutes"},
		{"cron length", func(d *MaintenanceDraft) { recurring(d).Cron = "0 2 * * " + overBytes(recur.MaxCronLen) }, "/recurrence/cron"},
		{"rrule length", func(d *MaintenanceDraft) {
			r := recurring(d)
			r.Cron, r.RRule = "", "FREQ=WEEKLY;BYDAY=SA;X-PAD="+overBytes(recur.MaxRRuleLen)
		}, "/recurrence/rrule"},
		{"timezone length", func(d *MaintenanceDraft) { recurring(d).Timezone = overBytes(recur.MaxZoneLen) }, "/recurrence/timezone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := MaintenanceDraft{Name: "upgrade", StartsAt: start, EndsAt: start.Add(time.Hour), MonitorIDs: []string{m.ID}}
			tc.spoil(&d)
			_, err := a.CreateMaintenanceWindow(ctx, actor, d)
			if strings.HasSuffix(tc.name, "count") { // the made-up ids are unknown too
				requireField(t, err, tc.ptr)
			} else {
				requireInvalid(t, err, tc.ptr)
			}
		})
	}
}

func rulesChannels(t *testing.T, a *App, actor Actor) {
	ctx := context.Background()
	bases := map[notify.Kind]ChannelDraft{
		notify.Webhook:   {Config: notify.Config{URL: "https://hooks.example.com/in"}},
		notify.Email:     {Config: notify.Config{To: []string{"ops@example.com"}}},
		notify.Ntfy:      {Config: notify.Config{Topic: "ops"}},
		notify.Telegram:  {Config: notify.Config{ChatID: "@ops"}, Secrets: &notify.Secrets{BotToken: "1:abc"}},
		notify.PagerDuty: {Secrets: &notify.Secrets{RoutingKey: strings.Repeat("r", notify.RoutingKeyLen)}},
		notify.Slack:     {Secrets: &notify.Secrets{HookURL: "https://hooks.slack.com/services/x"}},
	}
	for _, tc := range []struct {
		name  string
		kind  notify.Kind
		spoil func(*ChannelDraft)
		ptr   string
	}{
		{"kind", "carrier-pigeon", func(d *ChannelDraft) {}, "/kind"},
		{"name empty", notify.Webhook, func(d *ChannelDraft) { d.Name = "" }, "/name"},
		{"name length", notify.Webhook, func(d *ChannelDraft) { d.Name = over(notify.MaxName) }, "/name"},
		{"events count", notify.Webhook, func(d *ChannelDraft) {
			d.Events = list(notify.MaxEvents+1, func(int) string { return incident.IncidentOpened })
		}, "/events"},
		{"subjects count", notify.Webhook, func(d *ChannelDraft) {
			d.Subjects = list(notify.MaxSubjects+1, func(i int) string { return fmt.Sprint("mon_", i) })
		}, "/subjects"},
		{"url length", notify.Webhook, func(d *ChannelDraft) {
			d.Config.URL = "https://hooks.example.com/" + overBytes(notify.MaxURLLen-len("https://hooks.example.com/"))
		}, "/config/url"},
		{"topic length", notify.Ntfy, func(d *ChannelDraft) { d.Config.Topic = overBytes(notify.MaxTopicLen) }, "/config/topic"},
		{"chat id length", notify.Telegram, func(d *ChannelDraft) { d.Config.ChatID = overBytes(notify.MaxChatIDLen) }, "/config/chatId"},
		{"recipients count", notify.Email, func(d *ChannelDraft) {
			d.Config.To = list(notify.MaxRecipients+1, func(i int) string { return fmt.Sprintf("ops%d@example.com", i) })
		}, "/config/to"},
		{"hook url length", notify.Slack, func(d *ChannelDraft) {
			d.Secrets = &notify.Secrets{HookURL: "https://hooks.slack.com/" + overBytes(notify.MaxURLLen-len("https://hooks.slack.com/"))}
		}, "/secrets/hookUrl"},
		{"routing key length", notify.PagerDuty, func(d *ChannelDraft) {
			d.Secrets = &notify.Secrets{RoutingKey: overBytes(notify.MaxRoutingKeyLen)}
		}, "/secrets/routingKey"},
		{"bot token length", notify.Telegram, func(d *ChannelDraft) {
			d.Secrets = &notify.Secrets{BotToken: "1:" + overBytes(notify.MaxBotTokenLen-2)}
		}, "/secrets/botToken"},
		{"access token length", notify.Ntfy, func(d *ChannelDraft) {
			d.Secrets = &notify.Secrets{AccessToken: overBytes(notify.MaxAccessTokenLen)}
		}, "/secrets/accessToken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := bases[tc.kind]
			d.Name, d.Kind, d.Enabled = "ops", tc.kind, true
			tc.spoil(&d)
			_, _, err := a.CreateChannel(ctx, actor, d)
			requireInvalid(t, err, tc.ptr)
		})
	}
	t.Run("valid base drafts are accepted", func(t *testing.T) {
		for kind, d := range bases {
			d.Name, d.Kind, d.Enabled = "ops", kind, true
			if _, _, err := a.CreateChannel(ctx, actor, d); err != nil {
				t.Errorf("%s: %v", kind, err)
			}
		}
	})
	t.Run("update", func(t *testing.T) {
		d := bases[notify.Webhook]
		d.Name, d.Kind, d.Enabled = "ops", notify.Webhook, true
		v, _, err := a.CreateChannel(ctx, actor, d)
		if err != nil {
			t.Fatal(err)
		}
		_, err = a.UpdateChannel(ctx, actor, v.ID, func(cur ChannelView) (ChannelDraft, error) {
			return ChannelDraft{Name: cur.Name, Kind: cur.Kind, Enabled: true, Config: cur.Config,
				Events: list(notify.MaxEvents+1, func(int) string { return incident.IncidentResolved })}, nil
		})
		requireInvalid(t, err, "/events")
	})
}
