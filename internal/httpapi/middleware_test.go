package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestPanicBecomesEnvelope: a panic anywhere behind Observe answers 500 in
// the error envelope, logged once with the request id, and the server lives.
func TestPanicBecomesEnvelope(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	h := Observe(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/boom" {
			panic("kaboom with a secret")
		}
		w.WriteHeader(204)
	}))
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/boom")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body ErrorResponse
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	rid := res.Header.Get("X-Request-Id")
	if res.StatusCode != 500 || body.Err.Code != "internal" || body.Err.RequestID != rid || rid == "" {
		t.Errorf("%d %+v (X-Request-Id %q)", res.StatusCode, body, rid)
	}
	if strings.Contains(body.Err.Message, "kaboom") {
		t.Errorf("panic text reached the client: %q", body.Err.Message)
	}
	if !strings.Contains(logs.String(), "kaboom") || !strings.Contains(logs.String(), "requestId="+rid) {
		t.Errorf("panic not logged with its request id:\n%s", logs.String())
	}
	if res, err := http.Get(srv.URL + "/fine"); err != nil || res.StatusCode != 204 {
		t.Errorf("server after panic: %v %v", res, err)
	}
}

func TestRequestIDKeptWhenPlain(t *testing.T) {
	t.Parallel()
	h := Observe(slog.New(slog.DiscardHandler), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, c := range []struct {
		in   string
		keep bool
	}{{"abc-123_X.y", true}, {"", false}, {"has space", false}, {strings.Repeat("a", 129), false}, {"<script>", false}} {
		req := httptest.NewRequest("GET", "/", nil)
		if c.in != "" {
			req.Header.Set("X-Request-Id", c.in)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		got := w.Header().Get("X-Request-Id")
		if (got == c.in) != c.keep || got == "" {
			t.Errorf("X-Request-Id %q → %q", c.in, got)
		}
	}
}

func TestLocationPointer(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"body":                               "/",
		"body.name":                          "/name",
		"body.config.jsonAssertions[3].path": "/config/jsonAssertions/3/path",
		"body.config.headers.a~b":            "/config/headers/a~0b",
		"query.limit":                        "query.limit",
	} {
		if got := locationPointer(in); got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
}
