package console_test

import (
	"testing"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/web/public"
	"github.com/tocsin/tocsin/internal/web/webtest"
)

// env is the web's test server (see webtest), with the console's own
// helpers: people who sign in, and the things they work on.
type env struct{ *webtest.Env }

func forEachEngine(t *testing.T, opts public.Options, f func(t *testing.T, e *env)) {
	webtest.ForEachEngine(t, opts, func(t *testing.T, e *webtest.Env) { f(t, &env{e}) })
}

// newEnvWith is an env on eng with the app's config (its checker is the
// test's).
func newEnvWith(t *testing.T, eng storetest.Engine, opts public.Options, cfg app.Config) *env {
	t.Helper()
	return &env{webtest.New(t, eng, opts, cfg)}
}
