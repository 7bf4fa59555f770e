package public_test

import (
	"testing"

	"github.com/tocsin/tocsin/internal/web/public"
	"github.com/tocsin/tocsin/internal/web/webtest"
)

// env is the web's test server (see webtest).
type env = webtest.Env

func forEachEngine(t *testing.T, opts public.Options, f func(t *testing.T, e *env)) {
	webtest.ForEachEngine(t, opts, f)
}
