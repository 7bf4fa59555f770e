package httpapi

import (
	"context"
	"maps"
	"slices"

	"github.com/danielgtaylor/huma/v2"
)

// routes registers every operation of /api/v1, one line each, by resource.
// Each descriptor (an op value: scope, path-id checks, documented errors)
// sits beside its handler in the resource's file.
func (s *Server) routes() {
	// Monitors
	register(s.api, opCreateMonitor, s.createMonitor)
	register(s.api, opListMonitors, s.listMonitors)
	register(s.api, opGetMonitor, s.getMonitor)
	register(s.api, opUpdateMonitor, s.updateMonitor)
	register(s.api, opDeleteMonitor, s.deleteMonitor)
	register(s.api, opPauseMonitor, s.pauseMonitor)
	register(s.api, opResumeMonitor, s.resumeMonitor)
	register(s.api, opListMonitorChecks, s.listMonitorChecks)
	register(s.api, opListMonitorStates, s.listMonitorStates)
	register(s.api, opTestMonitor, s.testMonitor)

	// Maintenance windows
	register(s.api, opCreateMaintenanceWindow, s.createMaintenanceWindow)
	register(s.api, opListMaintenanceWindows, s.listMaintenanceWindows)
	register(s.api, opGetMaintenanceWindow, s.getMaintenanceWindow)
	register(s.api, opUpdateMaintenanceWindow, s.updateMaintenanceWindow)
	register(s.api, opDeleteMaintenanceWindow, s.deleteMaintenanceWindow)

	// Status pages (the resource; the public pages are served elsewhere)
	register(s.api, opCreateStatusPage, s.createStatusPage)
	register(s.api, opListStatusPages, s.listStatusPages)
	register(s.api, opGetStatusPage, s.getStatusPage)
	register(s.api, opUpdateStatusPage, s.updateStatusPage)
	register(s.api, opDeleteStatusPage, s.deleteStatusPage)
	register(s.api, imageBody(opPutStatusPageLogo), s.putStatusPageLogo)
	register(s.api, opDeleteStatusPageLogo, s.deleteStatusPageLogo)

	// Incidents
	register(s.api, opCreateIncident, s.createIncident)
	register(s.api, opListIncidents, s.listIncidents)
	register(s.api, opGetIncident, s.getIncident)
	register(s.api, opUpdateIncident, s.updateIncident)
	register(s.api, opPostIncidentUpdate, s.postIncidentUpdate)
	register(s.api, opAcknowledgeIncident, s.acknowledgeIncident)
	register(s.api, opResolveIncident, s.resolveIncident)

	// Notification channels and their deliveries
	register(s.api, opCreateNotificationChannel, s.createNotificationChannel)
	register(s.api, opListNotificationChannels, s.listNotificationChannels)
	register(s.api, opGetNotificationChannel, s.getNotificationChannel)
	register(s.api, opUpdateNotificationChannel, s.updateNotificationChannel)
	register(s.api, opDeleteNotificationChannel, s.deleteNotificationChannel)
	register(s.api, opRotateNotificationChannelSecret, s.rotateNotificationChannelSecret)
	register(s.api, opListNotificationChannelDeliveries, s.listNotificationChannelDeliveries)
	register(s.api, opTestNotificationChannel, s.testNotificationChannel)
	register(s.api, opGetDelivery, s.getDelivery)
	register(s.api, opRedeliver, s.redeliver)

	// Heartbeats. Their ping URLs are not huma operations: ServeHTTP hands
	// them to ServePing, and New adds them to the document with
	// documentPings (both in pings.go).
	register(s.api, opCreateHeartbeat, s.createHeartbeat)
	register(s.api, opListHeartbeats, s.listHeartbeats)
	register(s.api, opGetHeartbeat, s.getHeartbeat)
	register(s.api, opUpdateHeartbeat, s.updateHeartbeat)
	register(s.api, opDeleteHeartbeat, s.deleteHeartbeat)
	register(s.api, opPauseHeartbeat, s.pauseHeartbeat)
	register(s.api, opResumeHeartbeat, s.resumeHeartbeat)
	register(s.api, opRotateHeartbeatToken, s.rotateHeartbeatToken)
	register(s.api, opListHeartbeatStates, s.listHeartbeatStates)
	register(s.api, opListHeartbeatPings, s.listHeartbeatPings)

	// Metrics
	register(s.api, csvExport(opGetMonitorMetrics), s.getMonitorMetrics)
	register(s.api, csvExport(opGetHeartbeatMetrics), s.getHeartbeatMetrics)
	register(s.api, csvExport(opListMetrics), s.listMetrics)
	register(s.api, opScrapeMetrics, s.scrapeMetrics)
}

// register is huma.Register on a copy of op: huma fills in the
// operation's maps and the structs they point to as it registers, and
// the descriptors are package values that every Server in the process
// shares (tests run many at once).
func register[I, O any](api huma.API, op huma.Operation, h func(context.Context, *I) (*O, error)) {
	huma.Register(api, ownOperation(op), h)
}

// ownOperation copies what registering writes to: the metadata, the
// lists, the request body and responses with their headers and media
// types.
func ownOperation(o huma.Operation) huma.Operation {
	o.Metadata = maps.Clone(o.Metadata)
	o.Errors = slices.Clone(o.Errors)
	o.Parameters = ownParams(o.Parameters)
	if o.RequestBody != nil {
		rb := *o.RequestBody
		rb.Content = ownContent(rb.Content)
		o.RequestBody = &rb
	}
	if o.Responses != nil {
		rs := make(map[string]*huma.Response, len(o.Responses))
		for code, r := range o.Responses {
			c := *r
			c.Content = ownContent(r.Content)
			if r.Headers != nil {
				c.Headers = make(map[string]*huma.Param, len(r.Headers))
				for name, h := range r.Headers {
					hc := *h
					c.Headers[name] = &hc
				}
			}
			rs[code] = &c
		}
		o.Responses = rs
	}
	return o
}

func ownParams(ps []*huma.Param) []*huma.Param {
	if ps == nil {
		return nil
	}
	out := make([]*huma.Param, len(ps))
	for i, p := range ps {
		c := *p
		out[i] = &c
	}
	return out
}

func ownContent(c map[string]*huma.MediaType) map[string]*huma.MediaType {
	if c == nil {
		return nil
	}
	out := make(map[string]*huma.MediaType, len(c))
	for ct, m := range c {
		mc := *m
		out[ct] = &mc
	}
	return out
}
