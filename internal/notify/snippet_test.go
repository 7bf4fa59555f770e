package notify_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/notify"
)

// The receiver in docs/webhooks.md, built as a reader would copy it,
// accepts what Sign makes and refuses a changed body.
func TestReceiverSnippet(t *testing.T) {
	doc, err := os.ReadFile("../../docs/webhooks.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- receiver:begin -->\n```go\n")
	code, _, ok2 := strings.Cut(rest, "```\n<!-- receiver:end -->")
	if !ok || !ok2 {
		t.Fatal("docs/webhooks.md has no receiver snippet between its markers")
	}
	dir := t.TempDir()
	harness := `package main

import (
	"fmt"
	"os"
	"time"
)

// Runs before main: verifies one delivery from the environment and exits.
func init() {
	err := verifySignature(os.Getenv("CHECK_HEADER"), []byte(os.Getenv("CHECK_BODY")), os.Getenv("TOCSIN_WEBHOOK_SECRET"), 5*time.Minute)
	if err != nil {
		fmt.Println("refused:", err)
		os.Exit(3)
	}
	fmt.Println("verified")
	os.Exit(0)
}
`
	for name, text := range map[string]string{"main.go": code, "harness.go": harness, "go.mod": "module receiver\n\ngo 1.24\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "receiver")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the snippet does not build: %v\n%s", err, out)
	}
	secret := notify.NewSigningSecret()
	body := `{"id":"evt_1","type":"incident.opened"}`
	header := notify.Sign(time.Now(), []byte(body), []string{notify.NewSigningSecret(), secret}) // mid-rotation: the receiver has the old one
	run := func(body string) (string, int) {
		cmd := exec.Command(bin)
		cmd.Env = append(os.Environ(), "TOCSIN_WEBHOOK_SECRET="+secret, "CHECK_HEADER="+header, "CHECK_BODY="+body)
		out, _ := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), cmd.ProcessState.ExitCode()
	}
	if out, code := run(body); code != 0 || out != "verified" {
		t.Errorf("a genuine delivery: exit %d, %s", code, out)
	}
	if out, code := run(body + " "); code != 3 || !strings.Contains(out, "no valid signature") {
		t.Errorf("a changed body: exit %d, %s", code, out)
	}
}
