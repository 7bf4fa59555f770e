package monitor

import (
	"hash/fnv"
	"time"
)

// A monitor's checks are due at fixed slots: its phase plus whole intervals
// since the Unix epoch. The phase comes from the monitor's id, so the
// monitors of a workspace spread evenly over their interval (no herd when a
// thousand are created or a server starts), and every node computes the same
// slots.

// Phase is where in its interval a monitor's slots fall.
func Phase(id string, interval time.Duration) time.Duration {
	if interval <= 0 {
		return 0
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(id))
	return time.Duration(h.Sum64() % uint64(interval))
}

// NextSlot is the first slot of the monitor strictly after t.
func NextSlot(id string, interval time.Duration, t time.Time) time.Time {
	if interval <= 0 {
		return t
	}
	phase := Phase(id, interval)
	since := time.Duration(t.UnixNano()) - phase
	k := since / interval
	if since < 0 && since%interval != 0 {
		k-- // floor for times before the first slot
	}
	return time.Unix(0, int64(phase+(k+1)*interval)).UTC()
}
