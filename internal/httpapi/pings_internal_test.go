package httpapi

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/stamp"
)

// The hand-written acknowledgement is byte for byte what encoding/json
// writes of PingAck, the type the OpenAPI document describes.
func TestPingAckEncoding(t *testing.T) {
	t.Parallel()
	code := func(n int) *int { return &n }
	ms := func(f float64) *float64 { return &f }
	at := time.Date(2026, 11, 25, 3, 4, 5, 678901000, time.UTC)
	acks := []PingAck{
		{OK: true, Signal: "success", ReceivedAt: stamp.Of(at)},
		{OK: true, Signal: "start", ReceivedAt: stamp.Of(at.Truncate(time.Second)), Ignored: true},
		{OK: true, Signal: "fail", ExitCode: code(255), ReceivedAt: stamp.Of(at), BodyTruncated: true, DurationMs: ms(1234.567), Replayed: true},
		{OK: true, Signal: "success", ExitCode: code(0), ReceivedAt: stamp.Of(at), DurationMs: ms(0)},
		{OK: true, Signal: "a<b>&\"\\\n\u00e9", ReceivedAt: stamp.Of(at), DurationMs: ms(1e-7)},
	}
	for _, f := range []float64{0.001, 1e20, 1e21, 123456789.123, math.SmallestNonzeroFloat64, 5e-324, 0.5} {
		acks = append(acks, PingAck{OK: true, Signal: "success", ReceivedAt: stamp.Of(at), DurationMs: ms(f)})
	}
	for _, a := range acks {
		want, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendPingAck(nil, a); string(got) != string(want) {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}
