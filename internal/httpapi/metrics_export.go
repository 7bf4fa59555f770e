package httpapi

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/metrics"
	"github.com/tocsin/tocsin/internal/stamp"
)

// CSV exports: the metrics operations answer text/csv to a client whose
// Accept header prefers it, for reports. Four pieces, each small:
// csvExport marks and documents an operation; the negotiateCSV middleware
// lets only marked operations see a CSV Accept (the others answer JSON,
// as they did before CSV existed) and flags the request; the csvRows
// transformer turns a flagged metrics body into rows and sets the
// download headers while they can still be set; csvFormat writes the
// rows. Errors stay JSON (ErrorResponse.ContentType).

// csvType is the media type of the exports.
const csvType = "text/csv"

// metaCSV is the Operation.Metadata key of operations that export CSV.
const metaCSV = "csv"

type csvKeyType struct{}

// csvKey flags, in a request's context, that the answer is CSV.
var csvKey csvKeyType

// csvColumns name the columns of every metrics export, in order. The
// names are stable: reports and scripts address columns by them.
var csvColumns = []string{
	"subjectId", "kind", "name", "from", "to",
	"availability", "unadjustedAvailability", "coverage",
	"pendingSeconds", "upSeconds", "degradedSeconds", "downSeconds", "unknownSeconds", "pausedSeconds", "maintenanceSeconds", "beforeCreationSeconds",
	"checksUp", "checksDegraded", "checksDown", "checksUnknown", "checksTotal",
	"pingsSuccess", "pingsStart", "pingsFail", "pingsTotal",
	"latencyP50Ms", "latencyP90Ms", "latencyP95Ms", "latencyP99Ms", "latencyMinMs", "latencyMaxMs", "latencyMeanMs",
	"runDurationP50Ms", "runDurationP90Ms", "runDurationP95Ms", "runDurationP99Ms", "runDurationMinMs", "runDurationMaxMs", "runDurationMeanMs",
	"incidents", "downtimeSeconds", "mttrSeconds",
}

// csvTable is a metrics answer as rows, header first.
type csvTable [][]string

// csvFormat writes a csvTable with RFC 4180 quoting.
var csvFormat = huma.Format{
	Marshal: func(w io.Writer, v any) error {
		t, ok := v.(csvTable)
		if !ok {
			// negotiateCSV lets no other body get here.
			return fmt.Errorf("no CSV form for %T", v)
		}
		cw := csv.NewWriter(w)
		if err := cw.WriteAll(t); err != nil {
			return err
		}
		return cw.Error()
	},
	Unmarshal: func([]byte, any) error { return fmt.Errorf("CSV request bodies are not accepted") },
}

// ContentType keeps errors in the JSON envelope whatever the client
// prefers (huma asks before writing an error).
func (e *ErrorResponse) ContentType(ct string) string {
	if ct == csvType {
		return "application/json"
	}
	return ct
}

// csvExport marks an operation as exporting CSV and lists text/csv, its
// file name and its next-page Link beside JSON in the document.
func csvExport(o huma.Operation) huma.Operation {
	o.Metadata = maps.Clone(o.Metadata) // the descriptor's is every Server's
	o.Metadata[metaCSV] = true
	headers := map[string]*huma.Param{
		"Content-Disposition": {Description: "For text/csv: attachment, with a file name.", Schema: &huma.Schema{Type: huma.TypeString}},
	}
	if o.OperationID == "listMetrics" {
		headers["Link"] = &huma.Param{Description: `For text/csv, when another page exists: <the same request with cursor set to the next page>; rel="next".`,
			Schema: &huma.Schema{Type: huma.TypeString}}
	}
	o.Responses = map[string]*huma.Response{"200": {Description: "OK", Headers: headers, Content: map[string]*huma.MediaType{
		"application/json": {},
		csvType: {Schema: &huma.Schema{Type: huma.TypeString,
			Description: "With Accept: text/csv. A header row naming the columns, then one row per subject, or with resolution one per subject and bucket, its from and to being the bucket's. " +
				"Columns: " + strings.Join(csvColumns, ", ") + ". Durations in seconds, latencies and run durations in milliseconds, times RFC 3339 in UTC; " +
				"an empty cell is null or a figure the subject's kind has not. Text cells that start with =, +, -, @, a tab or a carriage return are prefixed with a single quote (') so spreadsheets do not run them as formulas."}},
	}}}
	return o
}

// negotiateCSV lets a CSV Accept through to operations that export CSV,
// flagged in the context; to the others the client seems to accept any
// type, so they answer JSON.
func (s *Server) negotiateCSV(ctx huma.Context, next func(huma.Context)) {
	if ct, _ := s.api.Negotiate(ctx.Header("Accept")); ct != csvType {
		next(ctx)
		return
	}
	if ctx.Operation().Metadata[metaCSV] == true {
		next(huma.WithValue(ctx, csvKey, true))
		return
	}
	next(anyAccepted{ctx})
}

// anyAccepted is a request context without an Accept header.
type anyAccepted struct{ humaContext }

func (c anyAccepted) Header(name string) string {
	if strings.EqualFold(name, "Accept") {
		return ""
	}
	return c.humaContext.Header(name)
}

// Unwrap gives humago.Unwrap the request underneath.
func (c anyAccepted) Unwrap() huma.Context { return c.humaContext }

// csvRows turns a metrics body into a csvTable when the request asked for
// CSV, and sets the file name and the next page's Link.
func csvRows(ctx huma.Context, status string, v any) (any, error) {
	if ctx.Context().Value(csvKey) != true || status != "200" {
		return v, nil
	}
	t := csvTable{csvColumns}
	switch b := v.(type) {
	case MetricsResponse:
		t = appendSubjectRows(t, b.SubjectMetrics)
		ctx.SetHeader("Content-Disposition", `attachment; filename="tocsin-metrics-`+b.Subject.ID+`.csv"`)
	case MetricsList:
		for _, m := range b.Data {
			t = appendSubjectRows(t, m)
		}
		ctx.SetHeader("Content-Disposition", `attachment; filename="tocsin-metrics.csv"`)
		if b.NextCursor != nil {
			u := ctx.URL()
			q := u.Query()
			q.Set("cursor", *b.NextCursor)
			ctx.SetHeader("Link", "<"+Prefix+"/metrics?"+q.Encode()+`>; rel="next"`)
		}
	default:
		return v, nil
	}
	ctx.SetHeader("Content-Type", csvType+"; charset=utf-8")
	return t, nil
}

// appendSubjectRows appends a subject's row, or with a series one row per
// bucket.
func appendSubjectRows(t csvTable, m SubjectMetrics) csvTable {
	if m.Resolution == "" {
		return append(t, csvRow(m.Subject, m.From.Time, m.To.Time, m.MetricFigures))
	}
	for _, b := range m.Series {
		t = append(t, csvRow(m.Subject, b.Start.Time, b.End.Time, b.MetricFigures))
	}
	return t
}

func csvRow(s MetricsSubject, from, to time.Time, f MetricFigures) []string {
	d := f.Durations
	row := []string{csvText(s.ID), csvText(s.Kind), csvText(s.Name), stamp.Format(from), stamp.Format(to),
		csvFloat(f.Availability), csvFloat(f.UnadjustedAvailability), csvFloat(f.Coverage),
		csvNumber(d.Pending), csvNumber(d.Up), csvNumber(d.Degraded), csvNumber(d.Down), csvNumber(d.Unknown), csvNumber(d.Paused), csvNumber(d.Maintenance), csvNumber(d.BeforeCreation)}
	if c := f.Checks; c != nil {
		row = append(row, csvInt(c.Up), csvInt(c.Degraded), csvInt(c.Down), csvInt(c.Unknown), csvInt(c.Total))
	} else {
		row = append(row, "", "", "", "", "")
	}
	if p := f.Pings; p != nil {
		row = append(row, csvInt(p.Success), csvInt(p.Start), csvInt(p.Fail), csvInt(p.Total))
	} else {
		row = append(row, "", "", "", "")
	}
	row = appendSummary(row, f.LatencyMs)
	row = appendSummary(row, f.RunDurationMs)
	return append(row, strconv.Itoa(f.Incidents.Count), csvNumber(f.Incidents.DowntimeSeconds), csvFloat(f.Incidents.MTTRSeconds))
}

func appendSummary(row []string, l *metrics.LatencySummary) []string {
	if l == nil {
		return append(row, "", "", "", "", "", "", "")
	}
	return append(row, csvFloat(l.P50), csvFloat(l.P90), csvFloat(l.P95), csvFloat(l.P99), csvFloat(l.Min), csvFloat(l.Max), csvFloat(l.Mean))
}

// csvText defuses a text cell that a spreadsheet would run as a formula
// (OWASP's advice for CSV injection): it is prefixed with a single quote.
func csvText(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// csvNumber writes a number the shortest way that reads back exactly,
// never in exponent form, which some spreadsheets take for text.
func csvNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func csvFloat(v *float64) string {
	if v == nil {
		return ""
	}
	return csvNumber(*v)
}

func csvInt(v int64) string { return strconv.FormatInt(v, 10) }
