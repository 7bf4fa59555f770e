package heartbeat

import "time"

// KeyTTL is how long a ping's ?key= makes a retry a no-op.
const KeyTTL = 24 * time.Hour

// Arrival is one received ping, as the ping endpoint hands it on.
type Arrival struct {
	TokenHash []byte
	Ping      Ping // At is when it arrived
	Method    string
	Client    string
	UserAgent string
	Key       string // ?key=, "" for none
	Body      []byte
	Truncated bool // Body is the first MaxPingBody bytes of a longer one
}

// Ack is what a ping is acknowledged with; a retry with the same key
// gets the same one.
type Ack struct {
	HeartbeatID   string    `json:"heartbeatId"`
	Signal        string    `json:"signal"`
	ExitCode      int       `json:"exitCode"` // -1: none given
	RunID         string    `json:"runId,omitempty"`
	ReceivedAt    time.Time `json:"receivedAt"`
	Ignored       bool      `json:"ignored,omitempty"`
	BodyTruncated bool      `json:"bodyTruncated,omitempty"`
	DurationUs    int64     `json:"durationUs"` // -1: not a completion of a started run
}

// Outcome is the outcome of one Arrival, in the batch's order.
type Outcome struct {
	Found    bool // false: no heartbeat has this token
	Ack      Ack
	Replayed bool // the key was seen within KeyTTL: nothing was recorded
}

// PingRecord is a stored ping, for listings.
type PingRecord struct {
	ID        int64
	At        time.Time
	Signal    Signal
	ExitCode  int // -1: none
	RunID     string
	Duration  time.Duration // -1: not a completion of a started run
	Method    string
	Client    string
	UserAgent string
	Key       string
	Body      []byte
	Truncated bool
	Ignored   bool
}
