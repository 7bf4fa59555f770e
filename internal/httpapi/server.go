// Package httpapi serves /api/v1. Its wire types are the request schemas,
// the runtime validators and the OpenAPI 3.1 document at once: huma derives
// all three from the same Go types. It never touches the store; every rule
// lives in package app.
package httpapi

import (
	"log/slog"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/tocsin/tocsin/internal/app"
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
}

// Server is the /api/v1 handler.
type Server struct {
	app     *app.App
	log     *slog.Logger
	api     huma.API
	mux     *http.ServeMux
	handler http.Handler
	baseURL string
}

// New builds the API and registers every route.
func New(a *app.App, log *slog.Logger, opts Options) *Server {
	cfg := huma.DefaultConfig("Tocsin API", Version)
	cfg.CreateHooks = nil // no injected $schema fields or Link headers
	cfg.DocsPath = ""     // the docs UI would load scripts from a CDN
	cfg.SchemasPath = ""
	cfg.OpenAPIPath = Prefix + "/openapi"
	cfg.Info.Description = "Monitors web services and scheduled jobs and reports their availability. " +
		"Errors always use the envelope {error: {code, message, details?, requestId}}."
	if opts.BaseURL != "" {
		cfg.Servers = []*huma.Server{{URL: opts.BaseURL}}
	}
	cfg.Components.SecuritySchemes = map[string]*huma.SecurityScheme{
		"apiKey": {Type: "http", Scheme: "bearer", Description: "An API key (tsk_…) with the scopes the operation lists."},
	}
	s := &Server{app: a, log: log, mux: http.NewServeMux(), baseURL: opts.BaseURL}
	s.api = humago.New(s.mux, cfg)
	s.api.UseMiddleware(s.authenticate, s.knownIDs, s.cleanBody, s.idempotent)
	s.routes()
	s.documentPings()
	documentHeaders(s.api.OpenAPI())
	routed(s.mux)
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
	r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes+1)
	s.handler.ServeHTTP(w, r)
}

// OpenAPI is the API's document, as served.
func (s *Server) OpenAPI() *huma.OpenAPI { return s.api.OpenAPI() }
