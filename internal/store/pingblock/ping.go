package pingblock

import (
	"slices"

	"github.com/tocsin/tocsin/internal/heartbeat"
)

// Key is a ping's idempotency key on its heartbeat (by seq): a ping
// repeating one within the key's lifetime is replayed, not recorded.
type Key struct {
	Seq int64
	Key string
}

// ArrivalOrder is the order a batch's pings apply in: by the time they
// arrived. Handlers stamp a ping before queueing it, so two may reach
// the queue out of order by a hair.
func ArrivalOrder(batch []heartbeat.Arrival) []int {
	order := make([]int, len(batch))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return batch[a].Ping.At.Compare(batch[b].Ping.At) })
	return order
}

// Record is the stored form of an arrival, before the state machine has
// said what it did (Duration -1, not Ignored).
func Record(id int64, in heartbeat.Arrival) heartbeat.PingRecord {
	p := in.Ping
	return heartbeat.PingRecord{ID: id, At: p.At, Signal: p.Signal, ExitCode: p.ExitCode, RunID: p.RunID, Duration: -1,
		Method: in.Method, Client: in.Client, UserAgent: in.UserAgent, Key: in.Key, Body: in.Body, Truncated: in.Truncated}
}

// AckOf is the acknowledgement of a stored ping.
func AckOf(heartbeatID string, rec *heartbeat.PingRecord) heartbeat.Ack {
	ack := heartbeat.Ack{HeartbeatID: heartbeatID, Signal: rec.Signal.String(), ExitCode: rec.ExitCode, RunID: rec.RunID,
		ReceivedAt: rec.At, BodyTruncated: rec.Truncated, Ignored: rec.Ignored, DurationUs: -1}
	if rec.Duration >= 0 {
		ack.DurationUs = rec.Duration.Microseconds()
	}
	return ack
}
