package monitor

import "time"

// What the check scheduler hands back and forth with the application:
// a check it claimed, the check once run, and the state changes that
// recording it made.

// DueCheck is a check claimed to run: the monitor with its sealed
// credential and header values (opened only when the check runs), the slot
// it is due at, and how long the claim holds. Seq numbers the monitor's
// runtime row.
type DueCheck struct {
	Seq           int64
	Monitor       Monitor
	SealedAuth    []byte
	SealedHeaders []byte
	Due           time.Time
	LeaseUntil    time.Time
}

// Completed is one finished check to record: its observation and the
// monitor's state-machine thresholds.
type Completed struct {
	Seq         int64
	Observation Observation
	Thresholds  Thresholds
}

// StateChange is a transition of a monitor or heartbeat (SubjectID) that
// a recorded change made.
type StateChange struct {
	SubjectID string
	Transition
}
