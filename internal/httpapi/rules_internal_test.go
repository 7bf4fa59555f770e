package httpapi

import (
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/heartbeat"
	"github.com/tocsin/tocsin/internal/incident"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/recur"
)

// limitTags are the struct tags through which huma would read a limit.
var limitTags = []string{"minLength", "maxLength", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
	"minItems", "maxItems", "minProperties", "maxProperties", "pattern", "format"}

// TestBodyLimitsHaveOneSource: no type of the document states a limit in
// a struct tag. Every limit comes from a domain constant through
// TransformSchema (rules.go), so no number can say one thing in the
// document and another in the rule app enforces. A new field with a tag
// limit fails here until its limit is named in the domain and bound.
func TestBodyLimitsHaveOneSource(t *testing.T) {
	t.Parallel()
	s := New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{})
	reg := s.OpenAPI().Components.Schemas
	checked := 0
	for name := range reg.Map() {
		typ := reg.TypeFromRef("#/components/schemas/" + name)
		for typ != nil && (typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice) {
			typ = typ.Elem()
		}
		if typ == nil || typ.Kind() != reflect.Struct {
			continue
		}
		for f := range fields(typ) {
			checked++
			for _, tag := range limitTags {
				if v, ok := f.Tag.Lookup(tag); ok {
					// Dates are a format of the wire, not a rule of the domain.
					if tag == "format" && v == "date-time" {
						continue
					}
					t.Errorf("%s.%s has the tag %s:%q: name the limit in the domain package that enforces it and bound it in rules.go",
						typ.Name(), f.Name, tag, v)
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d fields: the walk over the document's types found too few", checked)
	}
}

// fields yields t's fields, those of embedded structs included.
func fields(t reflect.Type) func(yield func(reflect.StructField) bool) {
	return func(yield func(reflect.StructField) bool) {
		for f := range t.Fields() {
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				for g := range fields(f.Type) {
					if !yield(g) {
						return
					}
				}
				continue
			}
			if !yield(f) {
				return
			}
		}
	}
}

// TestDocumentStatesTheDomainLimits reads the served document's bounds
// back and compares them with the constants the domain enforces, a few
// per resource, patch schemas included: the bounds reach the document and
// the validation huma runs from it.
func TestDocumentStatesTheDomainLimits(t *testing.T) {
	t.Parallel()
	s := New(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{})
	reg := s.OpenAPI().Components.Schemas
	maxLength := func(p *huma.Schema) int { return deref(p.MaxLength) }
	minLength := func(p *huma.Schema) int { return deref(p.MinLength) }
	maxItems := func(p *huma.Schema) int { return deref(p.MaxItems) }
	maximum := func(p *huma.Schema) int { return int(derefF(p.Maximum)) }
	minimum := func(p *huma.Schema) int { return int(derefF(p.Minimum)) }
	enum := func(p *huma.Schema) int { return len(p.Enum) }
	for _, c := range []struct {
		schema, prop string
		read         func(*huma.Schema) int
		want         int
	}{
		{"MonitorCreate", "name", maxLength, monitor.MaxNameLen},
		{"MonitorCreate", "name", minLength, 1},
		{"MonitorCreate", "intervalSeconds", minimum, monitor.MinIntervalSeconds},
		{"MonitorCreate", "intervalSeconds", maximum, monitor.MaxIntervalSeconds},
		{"MonitorCreate", "type", enum, len(monitor.Types)},
		{"MonitorPatch", "name", maxLength, monitor.MaxNameLen},
		{"MonitorConfig", "url", maxLength, monitor.MaxURLLen},
		{"MonitorConfig", "expectedStatusCodes", maxItems, monitor.MaxStatusCodes},
		{"MonitorConfig", "serverName", maxLength, monitor.MaxHostLen},
		{"MonitorConfig", "port", maximum, monitor.MaxPort},
		{"MonitorConfig", "method", enum, len(monitor.HTTPMethods)},
		{"JSONAssertion", "path", maxLength, monitor.MaxJSONPathLen},
		{"HeartbeatSchedule", "periodSeconds", minimum, heartbeat.MinPeriodSeconds},
		{"HeartbeatSchedule", "timezone", maxLength, recur.MaxZoneLen},
		{"HeartbeatPatch", "maxRuntimeSeconds", maximum, heartbeat.MaxRuntimeLimitSeconds},
		{"IncidentCreate", "message", maxLength, incident.MaxMessageLen},
		{"IncidentPatchBody", "affectedMonitors", maxItems, incident.MaxAffected},
		{"MaintenanceWindowCreate", "description", maxLength, app.MaxMaintenanceDescription},
		{"MaintenanceRecurrence", "rrule", maxLength, recur.MaxRRuleLen},
		{"ChannelCreate", "events", maxItems, notify.MaxEvents},
		{"ChannelCreate", "kind", enum, len(notify.Kinds)},
		{"ChannelPatch", "subjects", maxItems, notify.MaxSubjects},
		{"ChannelSecrets", "accessToken", maxLength, notify.MaxAccessTokenLen},
		{"StatusPageCreate", "slug", maxLength, app.MaxStatusPageSlug},
		{"StatusPageCreate", "password", minLength, app.MinStatusPagePassword},
		{"StatusPageCreate", "groups", maxItems, app.MaxStatusPageGroups},
		{"StatusPageCreate", "uptimeDays", enum, len(app.StatusPageUptimeDays)},
		{"StatusPageComponentWrite", "description", maxLength, app.MaxStatusPageComponentText},
		{"StatusPageLink", "url", maxLength, app.MaxStatusPageFooterURL},
	} {
		sch, ok := reg.Map()[c.schema]
		if !ok {
			t.Errorf("no schema %s", c.schema)
			continue
		}
		p, ok := sch.Properties[c.prop]
		if !ok {
			t.Errorf("%s has no property %s", c.schema, c.prop)
			continue
		}
		if got := c.read(p); got != c.want {
			t.Errorf("%s.%s: the document says %d, the domain %d", c.schema, c.prop, got, c.want)
		}
	}
	// The maintenance patch's schema is inline, a copy of the create's.
	patch := s.OpenAPI().Paths[Prefix+"/maintenance-windows/{id}"].Patch.RequestBody.Content["application/json"].Schema
	if got := maxLength(patch.Properties["name"]); got != app.MaxMaintenanceName {
		t.Errorf("maintenance patch name: the document says %d, the domain %d", got, app.MaxMaintenanceName)
	}
}

func deref(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

func derefF(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// TestBoundedRefusesUnknownProperties: a bound whose field was renamed
// stops the server from starting instead of vanishing from the document.
func TestBoundedRefusesUnknownProperties(t *testing.T) {
	t.Parallel()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "nmae") {
			t.Errorf("recovered %v, want a panic naming the property", r)
		}
	}()
	bounded(&huma.Schema{Properties: map[string]*huma.Schema{"name": {}}}, map[string]bound{"nmae": maxLen(1)})
}
