package httpapi

import (
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/recur"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// The bounds of the request bodies' schemas (lengths, counts, ranges, the
// choices of a field) come from the constants of the package that owns
// each resource, which enforces them itself: the document states exactly
// the rules app applies to every caller, the API and the web app alike.
// huma calls TransformSchema when it builds a type's schema, before the
// document is served or a request validated; struct tags carry no limits
// (TestBodyLimitsHaveOneSource holds that).

// bound sets one property's limits.
type bound func(*huma.Schema)

// bounded applies bounds to s's properties by JSON name. A name that is
// not a property panics: a renamed field must not drop its bound quietly
// (the server would not start, and every test says so).
func bounded(s *huma.Schema, bounds map[string]bound) *huma.Schema {
	for name, b := range bounds {
		p, ok := s.Properties[name]
		if !ok {
			panic("httpapi: no property " + name + " to bound in " + s.Title)
		}
		b(p)
	}
	return s
}

// length bounds a string to lo..hi characters; lo 0 states no minimum.
func length(lo, hi int) bound {
	return func(s *huma.Schema) {
		if lo > 0 {
			s.MinLength = &lo
		}
		s.MaxLength = &hi
	}
}

func maxLen(hi int) bound { return length(0, hi) }

// items bounds an array to at most hi entries.
func items(hi int) bound { return func(s *huma.Schema) { s.MaxItems = &hi } }

// between bounds a number to lo..hi.
func between(lo, hi int) bound {
	return func(s *huma.Schema) {
		l, h := float64(lo), float64(hi)
		s.Minimum, s.Maximum = &l, &h
	}
}

func atLeast(lo int) bound {
	return func(s *huma.Schema) {
		l := float64(lo)
		s.Minimum = &l
	}
}

// oneOf limits a string to the domain's list of choices, in its order.
func oneOf[T ~string](choices []T) bound {
	return func(s *huma.Schema) {
		s.Enum = make([]any, len(choices))
		for i, c := range choices {
			s.Enum[i] = string(c)
		}
	}
}

// choice limits a number to the domain's list of choices, in its order.
func choice(choices []int) bound {
	return func(s *huma.Schema) {
		s.Enum = make([]any, len(choices))
		for i, c := range choices {
			s.Enum[i] = c
		}
	}
}

// Monitors: monitor.Draft.Normalize.

func (MonitorCreate) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{
		"type":            oneOf(monitor.Types),
		"name":            length(1, monitor.MaxNameLen),
		"intervalSeconds": between(monitor.MinIntervalSeconds, monitor.MaxIntervalSeconds),
	})
}

func (MonitorPatch) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{
		"name":            length(1, monitor.MaxNameLen),
		"intervalSeconds": between(monitor.MinIntervalSeconds, monitor.MaxIntervalSeconds),
	})
}

func (MonitorConfig) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{
		"url":                 maxLen(monitor.MaxURLLen),
		"method":              oneOf(monitor.HTTPMethods),
		"body":                maxLen(monitor.MaxBodyLen),
		"timeoutSeconds":      between(1, monitor.MaxTimeoutSeconds),
		"expectedStatusCodes": items(monitor.MaxStatusCodes),
		"keywordAssertions":   items(monitor.MaxAssertions),
		"jsonAssertions":      items(monitor.MaxAssertions),
		"degradedLatencyMs":   atLeast(0),
		"confirmations":       between(1, monitor.MaxConfirmations),
		"recoveries":          between(1, monitor.MaxConfirmations),
		"host":                maxLen(monitor.MaxHostLen),
		"port":                between(1, monitor.MaxPort),
		"send":                maxLen(monitor.MaxBodyLen),
		"expect":              maxLen(monitor.MaxKeywordLen),
		"recordName":          maxLen(monitor.MaxHostLen),
		"recordType":          oneOf(monitor.DNSRecordTypes),
		"expectedValues":      items(monitor.MaxExpectedValues),
		"serverName":          maxLen(monitor.MaxHostLen),
		"degradedExpiryDays":  between(0, monitor.MaxExpiryDays),
		"downExpiryDays":      between(0, monitor.MaxExpiryDays),
	})
}

func (KeywordAssertion) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{"keyword": length(1, monitor.MaxKeywordLen)})
}

func (JSONAssertion) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{"path": length(1, monitor.MaxJSONPathLen)})
}

// Heartbeats: heartbeat.Draft.Normalize.

func (HeartbeatSchedule) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{
		"periodSeconds": between(heartbeat.MinPeriodSeconds, heartbeat.MaxPeriodSeconds),
		"cron":          maxLen(recur.MaxCronLen),
		"timezone":      maxLen(recur.MaxZoneLen),
		"graceSeconds":  between(0, heartbeat.MaxGraceSeconds),
	})
}

func (HeartbeatCreate) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, heartbeatBounds())
}

func (HeartbeatPatch) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, heartbeatBounds())
}

func heartbeatBounds() map[string]bound {
	return map[string]bound{
		"name":              length(1, monitor.MaxNameLen),
		"maxRuntimeSeconds": between(0, heartbeat.MaxRuntimeLimitSeconds),
	}
}

// Incidents: incident.ValidateTitle, ValidatePublicTitle, ValidateMessage,
// ValidateAffected.

func (IncidentCreate) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{
		"title":            length(1, incident.MaxTitleLen),
		"publicTitle":      length(0, incident.MaxTitleLen),
		"message":          length(1, incident.MaxMessageLen),
		"affectedMonitors": items(incident.MaxAffected),
	})
}

func (IncidentPatchBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{
		"title":            length(1, incident.MaxTitleLen),
		"publicTitle":      length(0, incident.MaxTitleLen),
		"affectedMonitors": items(incident.MaxAffected),
	})
}

func (IncidentUpdateCreate) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{"message": length(1, incident.MaxMessageLen)})
}

func (IncidentResolveBody) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{"message": maxLen(incident.MaxMessageLen)})
}

// Maintenance windows: app.ValidateMaintenance (and recur for the timing).
// The patch schema copies these (MaintenanceWindowPatch.Schema).

func (MaintenanceWindowCreate) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{
		"name":         length(1, app.MaxMaintenanceName),
		"description":  maxLen(app.MaxMaintenanceDescription),
		"monitorIds":   items(app.MaxMaintenanceSubjects),
		"heartbeatIds": items(app.MaxMaintenanceSubjects),
	})
}

func (MaintenanceRecurrence) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{
		"cron":            maxLen(recur.MaxCronLen),
		"rrule":           maxLen(recur.MaxRRuleLen),
		"timezone":        maxLen(recur.MaxZoneLen),
		"durationMinutes": between(1, int(recur.MaxRecurringDuration/time.Minute)),
	})
}

// Notification channels: notify.Validate.

func (ChannelCreate) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	b := channelBounds()
	b["kind"] = oneOf(notify.Kinds)
	return bounded(s, b)
}

func (ChannelPatch) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, channelBounds())
}

func channelBounds() map[string]bound {
	return map[string]bound{
		"name":     length(1, notify.MaxName),
		"events":   items(notify.MaxEvents),
		"subjects": items(notify.MaxSubjects),
	}
}

func (ChannelConfig) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{
		"url":    maxLen(notify.MaxURLLen),
		"topic":  maxLen(notify.MaxTopicLen),
		"chatId": maxLen(notify.MaxChatIDLen),
		"to":     items(notify.MaxRecipients),
	})
}

func (ChannelSecrets) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{
		"hookUrl":     maxLen(notify.MaxURLLen),
		"routingKey":  maxLen(notify.MaxRoutingKeyLen),
		"botToken":    maxLen(notify.MaxBotTokenLen),
		"accessToken": maxLen(notify.MaxAccessTokenLen),
	})
}

// Status pages: app.ValidateStatusPage. The patch schema copies these
// (StatusPagePatch.Schema).

func (StatusPageCreate) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{
		"slug":             length(app.MinStatusPageSlug, app.MaxStatusPageSlug),
		"title":            length(1, app.MaxStatusPageTitle),
		"description":      maxLen(app.MaxStatusPageDescription),
		"visibility":       oneOf(statuspage.Visibilities),
		"password":         length(app.MinStatusPagePassword, app.MaxStatusPagePassword),
		"customDomain":     maxLen(app.MaxStatusPageDomain),
		"uptimeDays":       choice(app.StatusPageUptimeDays),
		"pausedComponents": oneOf(statuspage.PausedChoices),
		"footerLinks":      items(app.MaxStatusPageFooterLinks),
		"groups":           items(app.MaxStatusPageGroups),
	})
}

func (StatusPageLink) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{
		"label": length(1, app.MaxStatusPageFooterLabel),
		"url":   maxLen(app.MaxStatusPageFooterURL),
	})
}

func (StatusPageGroupWrite) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{"name": maxLen(app.MaxStatusPageGroupName)})
}

func (StatusPageComponentWrite) TransformSchema(_ huma.Registry, s *huma.Schema) *huma.Schema {
	return bounded(s, map[string]bound{
		"name":        length(1, app.MaxStatusPageComponentName),
		"description": maxLen(app.MaxStatusPageComponentText),
	})
}
