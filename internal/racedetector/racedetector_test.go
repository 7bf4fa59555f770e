package racedetector

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestEnabled checks the constant against the build: a binary built with
// -race carries the detector's runtime, and its build settings say so.
func TestEnabled(t *testing.T) {
	out, err := exec.Command("go", "version", "-m", testBinary(t)).Output()
	if err != nil {
		t.Skipf("go version -m: %v", err)
	}
	built := strings.Contains(string(out), "-race=true")
	if built != Enabled {
		t.Fatalf("Enabled = %v, but the test binary was built with -race=%v", Enabled, built)
	}
}

func testBinary(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}
