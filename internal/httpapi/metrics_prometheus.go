package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/monitor"
)

// The Prometheus scrape endpoint: a workspace's monitors and heartbeats as
// gauges in the text exposition format, for a Prometheus server that
// scrapes with an API key (its authorization setting sends it as a bearer
// token). It is an ordinary operation: the same authentication, scope and
// rate limit as every other. Each request builds its own registry; nothing
// is global.

// expositionType is the text exposition format's media type.
const expositionType = "text/plain; version=0.0.4; charset=utf-8"

// scrapeSeries lists the series of a scrape, for the document.
var scrapeSeries = []string{
	"tocsin_monitor_state{id,name,type,state}: 1 for the monitor's state now, 0 for each of the six others",
	"tocsin_monitor_up{id,name,type}: 1 when UP or DEGRADED, 0 when DOWN, absent in the other states",
	"tocsin_monitor_last_check_timestamp_seconds{id,name,type}: when the latest check began; absent before the first",
	"tocsin_monitor_last_latency_seconds{id,name,type}: the latest check's latency, when its result was known",
	"tocsin_monitor_availability_ratio{id,name,type,window}: availability over the window (24h, 30d) ending now; absent when nothing is known",
	"tocsin_monitor_tls_certificate_expiry_timestamp_seconds{id,name,type}: tls monitors: when the certificate their checks last saw expires",
	"tocsin_heartbeat_state{id,name,state}, tocsin_heartbeat_up{id,name}, tocsin_heartbeat_availability_ratio{id,name,window}: as for monitors",
	"tocsin_heartbeat_last_ping_timestamp_seconds{id,name}: when the latest ping of any signal arrived; absent before the first",
}

var opScrapeMetrics = scrapeResponse(op(huma.Operation{OperationID: "scrapeMetrics", Method: http.MethodGet, Path: Prefix + "/metrics/prometheus",
	Summary: "Scrape the workspace's metrics (Prometheus)",
	Description: "Every monitor and heartbeat of the workspace in the Prometheus text exposition format 0.0.4, for a Prometheus server's scrape " +
		"(metrics_path: /api/v1/metrics/prometheus, with the API key as its bearer credentials). Series: " + strings.Join(scrapeSeries, "; ") + ". " +
		"Label values are escaped as the format requires. Availability follows the methodology of the other metrics operations. " +
		"Price: 1 point per subject and window, from the same budget as the other metrics operations; past the key's budget, 429 rate_limited with Retry-After; " +
		"a scrape of " + thousands(app.HeavyMetricsPoints) + " points or more waits for a slot for large queries as they do (503 unavailable with Retry-After).",
	Tags: tagsMetrics},
	account.ScopeMetricsRead, http.StatusServiceUnavailable))

// scrapeResponse documents the exposition as the 200 response's content.
func scrapeResponse(o huma.Operation) huma.Operation {
	o.Responses = map[string]*huma.Response{"200": {Description: "OK", Content: map[string]*huma.MediaType{
		"text/plain": {Schema: &huma.Schema{Type: huma.TypeString, Description: "The text exposition format, version 0.0.4 (Content-Type: " + expositionType + ")."}},
	}}}
	return o
}

type scrapeOutput struct {
	Body func(huma.Context)
}

func (s *Server) scrapeMetrics(ctx context.Context, _ *InWorkspace) (*scrapeOutput, error) {
	subjects, err := s.app.ScrapeMetrics(ctx, actorFrom(ctx))
	if err != nil {
		return nil, err
	}
	families, err := exposition(subjects).Gather()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			return nil, err
		}
	}
	return &scrapeOutput{Body: func(hc huma.Context) {
		hc.SetHeader("Content-Type", expositionType)
		hc.SetStatus(http.StatusOK)
		_, _ = hc.BodyWriter().Write(buf.Bytes())
	}}, nil
}

// exposition is a fresh registry holding the subjects' gauges.
func exposition(subjects []app.ScrapeSubject) *prometheus.Registry {
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	}
	var (
		monState   = gauge("tocsin_monitor_state", "1 for the monitor's state now, 0 for the others.", "id", "name", "type", "state")
		monUp      = gauge("tocsin_monitor_up", "1 when the monitor is UP or DEGRADED, 0 when DOWN; absent in other states.", "id", "name", "type")
		monChecked = gauge("tocsin_monitor_last_check_timestamp_seconds", "When the monitor's latest check began, in Unix seconds.", "id", "name", "type")
		monLatency = gauge("tocsin_monitor_last_latency_seconds", "The latency of the monitor's latest check, when its result was known.", "id", "name", "type")
		monAvail   = gauge("tocsin_monitor_availability_ratio", "Availability over the window ending now: (up + degraded) / known time.", "id", "name", "type", "window")
		monCert    = gauge("tocsin_monitor_tls_certificate_expiry_timestamp_seconds", "When the certificate the tls monitor's checks last saw expires, in Unix seconds.", "id", "name", "type")
		hbState    = gauge("tocsin_heartbeat_state", "1 for the heartbeat's state now, 0 for the others.", "id", "name", "state")
		hbUp       = gauge("tocsin_heartbeat_up", "1 when the heartbeat is UP or DEGRADED, 0 when DOWN; absent in other states.", "id", "name")
		hbPing     = gauge("tocsin_heartbeat_last_ping_timestamp_seconds", "When the heartbeat's latest ping arrived, in Unix seconds.", "id", "name")
		hbAvail    = gauge("tocsin_heartbeat_availability_ratio", "Availability over the window ending now: (up + degraded) / known time.", "id", "name", "window")
	)
	for _, sub := range subjects {
		labels := []string{sub.ID, sub.Name}
		state, up, avail := hbState, hbUp, hbAvail
		if sub.Kind == app.KindMonitor {
			labels = append(labels, string(sub.Type))
			state, up, avail = monState, monUp, monAvail
			if at := sub.LastCheck.At; !at.IsZero() {
				monChecked.WithLabelValues(labels...).Set(unixSeconds(at.UnixMicro()))
				if sub.LastCheck.Result.Known() {
					monLatency.WithLabelValues(labels...).Set(sub.LastCheck.Latency.Seconds())
				}
			}
			if exp := sub.LastCheck.CertExpiry; sub.Type == monitor.TypeTLS && !exp.IsZero() {
				monCert.WithLabelValues(labels...).Set(unixSeconds(exp.UnixMicro()))
			}
		} else if !sub.LastPing.IsZero() {
			hbPing.WithLabelValues(labels...).Set(unixSeconds(sub.LastPing.UnixMicro()))
		}
		for _, st := range monitor.States {
			v := 0.0
			if st == sub.State {
				v = 1
			}
			state.WithLabelValues(append(labels, string(st))...).Set(v)
		}
		switch sub.State {
		case monitor.StateUp, monitor.StateDegraded:
			up.WithLabelValues(labels...).Set(1)
		case monitor.StateDown:
			up.WithLabelValues(labels...).Set(0)
		}
		for i, w := range app.ScrapeWindows {
			if a := sub.Availability[i]; a != nil {
				avail.WithLabelValues(append(labels, w)...).Set(*a)
			}
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(monState, monUp, monChecked, monLatency, monAvail, monCert, hbState, hbUp, hbPing, hbAvail)
	return reg
}

func unixSeconds(micros int64) float64 { return float64(micros) / 1e6 }
