package httpapi

import "github.com/danielgtaylor/huma/v2"

// routes registers every operation of /api/v1, one line each, by resource.
// Each descriptor (an op value: scope, path-id checks, documented errors)
// sits beside its handler in the resource's file.
func (s *Server) routes() {
	// Monitors
	huma.Register(s.api, opCreateMonitor, s.createMonitor)
	huma.Register(s.api, opListMonitors, s.listMonitors)
	huma.Register(s.api, opGetMonitor, s.getMonitor)
	huma.Register(s.api, opUpdateMonitor, s.updateMonitor)
	huma.Register(s.api, opDeleteMonitor, s.deleteMonitor)
	huma.Register(s.api, opPauseMonitor, s.pauseMonitor)
	huma.Register(s.api, opResumeMonitor, s.resumeMonitor)
	huma.Register(s.api, opListMonitorChecks, s.listMonitorChecks)
	huma.Register(s.api, opListMonitorStates, s.listMonitorStates)
	huma.Register(s.api, opTestMonitor, s.testMonitor)

	// Maintenance windows
	huma.Register(s.api, opCreateMaintenanceWindow, s.createMaintenanceWindow)
	huma.Register(s.api, opListMaintenanceWindows, s.listMaintenanceWindows)
	huma.Register(s.api, opGetMaintenanceWindow, s.getMaintenanceWindow)
	huma.Register(s.api, opUpdateMaintenanceWindow, s.updateMaintenanceWindow)
	huma.Register(s.api, opDeleteMaintenanceWindow, s.deleteMaintenanceWindow)

	// Status pages (the resource; the public pages are served elsewhere)
	huma.Register(s.api, opCreateStatusPage, s.createStatusPage)
	huma.Register(s.api, opListStatusPages, s.listStatusPages)
	huma.Register(s.api, opGetStatusPage, s.getStatusPage)
	huma.Register(s.api, opUpdateStatusPage, s.updateStatusPage)
	huma.Register(s.api, opDeleteStatusPage, s.deleteStatusPage)
	huma.Register(s.api, imageBody(opPutStatusPageLogo), s.putStatusPageLogo)
	huma.Register(s.api, opDeleteStatusPageLogo, s.deleteStatusPageLogo)

	// Incidents
	huma.Register(s.api, opCreateIncident, s.createIncident)
	huma.Register(s.api, opListIncidents, s.listIncidents)
	huma.Register(s.api, opGetIncident, s.getIncident)
	huma.Register(s.api, opUpdateIncident, s.updateIncident)
	huma.Register(s.api, opPostIncidentUpdate, s.postIncidentUpdate)
	huma.Register(s.api, opAcknowledgeIncident, s.acknowledgeIncident)
	huma.Register(s.api, opResolveIncident, s.resolveIncident)

	// Notification channels and their deliveries
	huma.Register(s.api, opCreateNotificationChannel, s.createNotificationChannel)
	huma.Register(s.api, opListNotificationChannels, s.listNotificationChannels)
	huma.Register(s.api, opGetNotificationChannel, s.getNotificationChannel)
	huma.Register(s.api, opUpdateNotificationChannel, s.updateNotificationChannel)
	huma.Register(s.api, opDeleteNotificationChannel, s.deleteNotificationChannel)
	huma.Register(s.api, opRotateNotificationChannelSecret, s.rotateNotificationChannelSecret)
	huma.Register(s.api, opListNotificationChannelDeliveries, s.listNotificationChannelDeliveries)
	huma.Register(s.api, opTestNotificationChannel, s.testNotificationChannel)
	huma.Register(s.api, opGetDelivery, s.getDelivery)
	huma.Register(s.api, opRedeliver, s.redeliver)

	// Heartbeats. Their ping URLs are not huma operations: ServeHTTP hands
	// them to ServePing, and New adds them to the document with
	// documentPings (both in pings.go).
	huma.Register(s.api, opCreateHeartbeat, s.createHeartbeat)
	huma.Register(s.api, opListHeartbeats, s.listHeartbeats)
	huma.Register(s.api, opGetHeartbeat, s.getHeartbeat)
	huma.Register(s.api, opUpdateHeartbeat, s.updateHeartbeat)
	huma.Register(s.api, opDeleteHeartbeat, s.deleteHeartbeat)
	huma.Register(s.api, opPauseHeartbeat, s.pauseHeartbeat)
	huma.Register(s.api, opResumeHeartbeat, s.resumeHeartbeat)
	huma.Register(s.api, opRotateHeartbeatToken, s.rotateHeartbeatToken)
	huma.Register(s.api, opListHeartbeatStates, s.listHeartbeatStates)
	huma.Register(s.api, opListHeartbeatPings, s.listHeartbeatPings)

	// Metrics
	huma.Register(s.api, csvExport(opGetMonitorMetrics), s.getMonitorMetrics)
	huma.Register(s.api, csvExport(opGetHeartbeatMetrics), s.getHeartbeatMetrics)
	huma.Register(s.api, csvExport(opListMetrics), s.listMetrics)
	huma.Register(s.api, opScrapeMetrics, s.scrapeMetrics)
}
