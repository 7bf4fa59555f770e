// Package wait is the one way a test waits for something another
// goroutine or process makes true: it asks again and again, a little
// apart, and fails the test with what it waited for once the time given
// has passed. Tests that can drive an injected clock or read a channel do
// that instead; this is for what only shows from outside (a server's
// answer, a row another process wrote).
package wait

import (
	"testing"
	"time"
)

// every is how long For rests between two asks: short beside any
// timeout a test gives, long enough not to spin a CPU it shares.
const every = 20 * time.Millisecond

// For returns once cond holds, asking until timeout has passed; then it
// fails t, naming what it waited for.
func For(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s, in vain", timeout, what)
		}
		time.Sleep(every)
	}
}
