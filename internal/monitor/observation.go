package monitor

import "time"

// Observation is what one check of a monitor found (DESIGN §4): stored one
// row per check, listed by GET /monitors/{id}/checks, and fed to the state
// machine. It never holds the response body.
type Observation struct {
	MonitorID string
	// StartedAt is when the check began (or, for a check that never began,
	// when it was given up); Due is when the schedule wanted it to begin.
	StartedAt time.Time
	Due       time.Time
	Result    Result
	// Reason says briefly why the result is not up; empty when it is.
	Reason string
	// Latency is the whole check, from start to the last byte read.
	Latency time.Duration
	Phases  Phases
	// StatusCode is the HTTP status; 0 for other types or no response.
	StatusCode int
	// CertExpiry is when the certificate a tls check was shown expires;
	// zero when no handshake completed or the type has none.
	CertExpiry time.Time
	// Probe and Region name who ran the check.
	Probe  string
	Region string
	// Assertions holds each assertion's verdict. It is returned by
	// POST /monitors/test and is not stored.
	Assertions []Outcome
}

// Phases are the parts of a check's latency that the protocol has; a zero
// phase did not happen (a reused connection has no DNS or connect).
type Phases struct {
	DNS       time.Duration
	Connect   time.Duration
	TLS       time.Duration
	FirstByte time.Duration // from the start of the check to the first response byte
}

// Reasons for unknown results that more than one part of the engine gives.
const (
	ReasonShuttingDown  = "the check was cancelled because the process is shutting down"
	ReasonMissedStart   = "the check could not start before its deadline (scheduler overloaded)"
	ReasonProbeInternal = "internal error in the probe"
)
