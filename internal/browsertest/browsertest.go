// Package browsertest is what the tests that load pages in a real browser
// share: finding headless Chromium and axe-core (skipping with how to
// install them, or failing when TOCSIN_TEST_BROWSER_REQUIRED=1, as CI
// sets), starting the browser (Start) and opening tabs in it that collect
// what the browser reports (OpenTab; OpenIsolatedTab for one with its own
// cookies), the devices pages are looked at on, where screenshots go, and
// an accessibility audit.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// RequiredEnv makes a missing browser or axe-core a failure.
const RequiredEnv = "TOCSIN_TEST_BROWSER_REQUIRED"

// Chromium is the browser's path: TOCSIN_TEST_BROWSER, or the first
// Chromium on PATH.
func Chromium(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("TOCSIN_TEST_BROWSER"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-headless-shell", "chromium-browser", "headless_shell", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	unavailable(t, "no Chromium found: install Debian's chromium (apt-get install chromium) or set TOCSIN_TEST_BROWSER to a Chromium binary")
	return ""
}

func unavailable(t testing.TB, why string) {
	t.Helper()
	if os.Getenv(RequiredEnv) == "1" {
		t.Fatal(why + " (" + RequiredEnv + "=1)")
	}
	t.Skip(why + "; " + RequiredEnv + "=1 makes this a failure")
}

// RepoRoot is the directory of go.mod above the test's.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// Axe is axe-core's script, as `npm ci` installs it at the repository root.
func Axe(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(RepoRoot(t), "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		unavailable(t, "axe-core is not installed: run npm ci at the repository root")
	}
	return string(b)
}

// Artifacts is the directory the test's screenshots go to:
// $TOCSIN_TEST_ARTIFACTS/sub, by default artifacts/sub at the repository
// root.
func Artifacts(t testing.TB, sub string) string {
	t.Helper()
	dir := os.Getenv("TOCSIN_TEST_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(t), "artifacts")
	}
	dir = filepath.Join(dir, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// Write writes a file (a screenshot) into dir.
func Write(t testing.TB, dir, name string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Violation is one rule axe-core found broken.
type Violation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// Serious reports whether v is serious or critical.
func (v Violation) Serious() bool { return v.Impact == "serious" || v.Impact == "critical" }

// Audit runs axe-core (its script, axe) in the tab's page. It is
// evaluated through the DevTools protocol, so it needs no script-src and
// leaves the page's policy alone; its timers need the page's scripts on.
func Audit(t testing.TB, tab context.Context, axe string) []Violation {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](axe)); err != nil {
		t.Fatalf("load axe-core: %v", err)
	}
	v, err := chromedp.Run(ctx, chromedp.Evaluate[[]Violation](`axe.run(document, {resultTypes: ['violations']}).then(r =>
		r.violations.map(v => ({id: v.id, impact: v.impact || '', help: v.help,
			nodes: v.nodes.slice(0, 5).map(n => n.target.join(' ') + ': ' + n.failureSummary)})))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe.run: %v", err)
	}
	return v
}
