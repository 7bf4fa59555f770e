// Package httpapi serves /api/v1. Its wire types are the request schemas,
// the runtime validators and the OpenAPI 3.1 document at once: huma derives
// all three from the same Go types. It never touches the store; every rule
// lives in package app.
package httpapi

import (
	"log/slog"
	"maps"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clientaddr"
	"github.com/tocsin/tocsin/internal/stamp"
)

// Version is the API document's version.
const Version = "1.0.0"

// Prefix is the path every API route starts with.
const Prefix = "/api/v1"

// maxBodyBytes bounds every request body.
const maxBodyBytes = 256 << 10

// Options configure the API.
type Options struct {
	// BaseURL is where clients reach the service, e.g. https://tocsin.example.
	BaseURL string
	// TrustedProxies decides who a request's client is, for every limit
	// kept per address; the zero value believes no forwarding header.
	TrustedProxies clientaddr.Resolver
}

// Server is the /api/v1 handler.
type Server struct {
	app     *app.App
	log     *slog.Logger
	api     huma.API
	mux     *http.ServeMux
	handler http.Handler
	baseURL string
	clients clientaddr.Resolver
}

// New builds the API and registers every route.
func New(a *app.App, log *slog.Logger, opts Options) *Server {
	cfg := huma.DefaultConfig("Tocsin API", Version)
	cfg.CreateHooks = nil // no injected $schema fields or Link headers
	cfg.DocsPath = ""     // the docs UI would load scripts from a CDN
	cfg.SchemasPath = ""
	cfg.Formats = maps.Clone(cfg.Formats) // huma's defaults are a shared map
	cfg.Formats[csvType] = csvFormat      // the metrics exports (metrics_export.go)
	cfg.Transformers = append(cfg.Transformers, csvRows, retryHeader)
	cfg.OpenAPIPath = Prefix + "/openapi"
	cfg.Info.Description = "Monitors web services and scheduled jobs and reports their availability. " +
		"Errors always use the envelope {error: {code, message, details?, requestId}}."
	cfg.Info.License = &huma.License{Name: "Apache-2.0", URL: "https://www.apache.org/licenses/LICENSE-2.0"}
	// Relative: the document is served by the server it describes, under
	// whatever name clients reach it.
	cfg.Servers = []*huma.Server{{URL: "/", Description: "This service (the server that serves this document)."}}
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"apiKey": {Type: "http", Scheme: "bearer", Description: "An API key (tsk_…) with the scopes the operation lists."},
	}
	s := &Server{app: a, log: log, mux: http.NewServeMux(), baseURL: opts.BaseURL, clients: opts.TrustedProxies}
	s.api = humago.New(s.mux, cfg)
	// Times leave as stamp.Time; the document calls them date-time strings.
	s.api.OpenAPI().Components.Schemas.RegisterTypeAlias(reflect.TypeFor[stamp.Time](), reflect.TypeFor[time.Time]())
	s.api.UseMiddleware(s.authenticate, s.knownQuery, s.knownIDs, s.cleanBody, s.idempotent, s.negotiateCSV)
	s.routes()
	s.documentPings()
	documentHeaders(s.api.OpenAPI())
	s.routed()
	s.handler = s.mux
	return s
}

// ServeHTTP serves the API and the ping URLs.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, PingPrefix) {
		s.ServePing(w, r)
		return
	}
	if e := checkEdge(r); e != nil {
		s.refuse(w, r, e)
		return
	}
	if strings.HasPrefix(r.URL.Path, Prefix+"/openapi") {
		// The document needs no key: it is limited per address, in a
		// budget of its own.
		if s.limitAddress(r, w.Header(), bucketDocument) {
			writeJSONError(w, r, addressLimited())
			return
		}
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes+1)
	compressed(w, r, s.handler)
}

// OpenAPI is the API's document, as served.
func (s *Server) OpenAPI() *huma.OpenAPI { return s.api.OpenAPI() }
