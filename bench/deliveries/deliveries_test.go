package deliveries

import (
	"testing"

	"github.com/tocsin/tocsin/internal/notify"
)

func TestAutoChannels(t *testing.T) {
	bound := notify.RateBound(notify.Webhook)
	for _, c := range []struct{ n, want int }{{1, 1}, {bound, 1}, {bound + 1, 2}, {20000, (20000 + bound - 1) / bound}} {
		if got := autoChannels(c.n); got != c.want {
			t.Errorf("autoChannels(%d) = %d, want %d", c.n, got, c.want)
		}
	}
}
