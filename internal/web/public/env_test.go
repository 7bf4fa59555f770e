package public_test

import (
	"testing"

	"github.com/tocsin/tocsin/internal/web/public"
	"github.com/tocsin/tocsin/internal/web/webtest"
)

// env is the web's test server (see webtest), with the public pages' own
// helpers.
type env struct{ *webtest.Env }

func forEachEngine(t *testing.T, opts public.Options, f func(t *testing.T, e *env)) {
	webtest.ForEachEngine(t, opts, func(t *testing.T, e *webtest.Env) { f(t, &env{e}) })
}
