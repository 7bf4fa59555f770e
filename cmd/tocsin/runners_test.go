package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/store/storetest"
)

// TestServeOwnsEveryGoroutine: every goroutine serve starts — each
// runner's (checks, sweeps, rollups, housekeeping, deliveries, the ping
// writers), the database's own — has ended when serve returns. Nothing is started from a request
// path and left behind: a ping is taken and stored before the stop.
func TestServeOwnsEveryGoroutine(t *testing.T) {
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			env := engineEnv(t, eng)
			s := startServe(t, env)
			key := ownerKey(t, env, "monitors:read", "monitors:write")
			res := do(t, "POST", s.url+"/api/v1/heartbeats", key, `{"name":"job","schedule":{"periodSeconds":3600,"graceSeconds":60}}`)
			var hb struct{ PingURL string }
			if err := json.NewDecoder(res.Body).Decode(&hb); err != nil || res.StatusCode != 201 {
				t.Fatalf("create heartbeat: %d %v", res.StatusCode, err)
			}
			ping, err := http.Post(hb.PingURL, "text/plain", bytes.NewReader([]byte("done")))
			if err != nil || ping.StatusCode != 200 {
				t.Fatalf("ping: %v %v", ping, err)
			}
			ping.Body.Close()
			http.DefaultClient.CloseIdleConnections()

			s.cancel()
			select {
			case err := <-s.done:
				if err != nil {
					t.Fatalf("serve: %v", err)
				}
				s.done <- nil // for the cleanup
			case <-time.After(20 * time.Second):
				t.Fatal("serve did not stop")
			}
			var left string
			waitFor(t, 5*time.Second, "Tocsin's goroutines to end after serve returned",
				func() bool { left = ours(); return left == "" },
				func() string { return "goroutines of Tocsin still running after serve returned:\n" + left })
		})
	}
}

// ours returns the stacks of running goroutines, other than the one
// asking (first in the dump, and in wait's frames), that are in Tocsin's
// internal packages.
func ours() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n")[1:] {
		if strings.Contains(g, "github.com/tocsin/tocsin/internal/") {
			out = append(out, g)
		}
	}
	return strings.Join(out, "\n\n")
}
