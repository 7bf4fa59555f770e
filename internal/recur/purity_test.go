package recur

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPure holds the line: recur (with its dependencies) does no I/O of its
// own and imports nothing of the project, so any layer may use it.
func TestPure(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list listed %d packages; the check would prove nothing", len(deps))
	}
	for _, d := range deps {
		switch {
		case d == "net" || strings.HasPrefix(d, "net/"), strings.HasPrefix(d, "database/"),
			strings.HasPrefix(d, "github.com/tocsin/tocsin/") && d != "github.com/tocsin/tocsin/internal/recur":
			t.Errorf("recur depends on %s", d)
		}
	}
}
