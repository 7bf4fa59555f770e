package wait_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/wait"
)

func TestForReturnsOnceTrue(t *testing.T) {
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	wait.For(t, 5*time.Second, "three", func() bool { return n.Load() == 3 })
}

// recorder is a testing.TB that keeps the failure instead of ending the
// test, so the failing path can be checked.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
}

func TestForFailsNamingWhat(t *testing.T) {
	r := &recorder{TB: t}
	asks := 0
	wait.For(r, 50*time.Millisecond, "never", func() bool { asks++; return r.failed != "" })
	if r.failed == "" {
		t.Fatal("For returned without failing on a condition that never held")
	}
	if !strings.Contains(r.failed, "never") {
		t.Errorf("the failure %q does not name what was waited for", r.failed)
	}
	if asks < 2 {
		t.Fatalf("For asked %d times in 50 ms; want it to ask again before giving up", asks)
	}
}
