package notify

import (
	"math/rand/v2"
	"time"
)

// Delivery is one event on its way to one channel. Its id is what the
// receiver sees in X-Service-Delivery, the same on every attempt.
type Delivery struct {
	ID          string
	WorkspaceID string
	ChannelID   string
	EventID     string
	EventType   string
	Status      Status
	// Attempts made so far; NextAttemptAt is when the next is due
	// (pending only), GiveUpAt when retries end.
	Attempts       int
	NextAttemptAt  time.Time
	GiveUpAt       time.Time
	LastStatusCode int
	LastError      string
	// HeldBy is the summary delivery that told of one that was held.
	HeldBy      string
	CreatedAt   time.Time
	UpdatedAt   time.Time
	CompletedAt time.Time // zero while pending
	Log         []Attempt // oldest first
}

// Status is where a delivery stands.
type Status string

const (
	Pending   Status = "pending"   // due now or after a backoff
	Succeeded Status = "succeeded" // the receiver answered 2xx (or there was nothing to send)
	Failed    Status = "failed"    // retries ran out, or the channel went away; can be redelivered
	Held      Status = "held"      // held back by the channel's rate bound; told of in a summary
)

// Attempt is one try at a delivery.
type Attempt struct {
	N          int
	Node       string
	StartedAt  time.Time
	Duration   time.Duration
	StatusCode int    // 0: no HTTP answer
	Error      string // "" for a success; valid UTF-8 without NUL, at most MaxAttemptError bytes
}

// MaxAttemptError bounds an attempt's error as it is stored: it quotes
// what a receiver or mail server answered.
const MaxAttemptError = 1024

// Delivery timing (DESIGN §6).
const (
	// AttemptTimeout is how long a receiver has to answer 2xx.
	AttemptTimeout = 10 * time.Second
	// RetryHorizon is how long a delivery is retried before it fails.
	RetryHorizon = 24 * time.Hour
	// FirstRetry and MaxRetryDelay shape the backoff: 30 s, 1 m, 2 m, …
	// doubling up to 4 h, each ±20%: about 15 attempts in 24 hours.
	FirstRetry    = 30 * time.Second
	MaxRetryDelay = 4 * time.Hour
)

// Backoff is how long to wait after the attempt-th failed attempt (1 for
// the first), jittered ±20% by r in [0, 1) so that the deliveries of one
// outage do not come back in one wave.
func Backoff(attempt int, first, max time.Duration, r float64) time.Duration {
	d := first
	for i := 1; i < attempt && d < max; i++ {
		d *= 2
	}
	d = min(d, max)
	return time.Duration(float64(d) * (0.8 + 0.4*r))
}

// NextAttempt says when a delivery that just failed its attempt-th attempt
// at now is tried again; ok false means its retries have run out.
func NextAttempt(attempt int, now, giveUpAt time.Time, first, max time.Duration) (at time.Time, ok bool) {
	at = now.Add(Backoff(attempt, first, max, rand.Float64()))
	if at.After(giveUpAt) {
		return time.Time{}, false
	}
	return at, true
}

// Permanent reports whether an HTTP answer ends a delivery's retries at
// once: 410 Gone says the receiver is gone for good, and disables the
// channel.
func Permanent(statusCode int) bool { return statusCode == 410 }

// Success reports whether an HTTP answer delivered the event.
func Success(statusCode int) bool { return statusCode >= 200 && statusCode < 300 }

// RateWindow is the span of a channel's rate bound.
const RateWindow = time.Minute

// RateBound is how many events a channel of this kind takes in a
// RateWindow before the rest are held back and told of in one summary
// (EventHeld) once the window ends: a storm of outages reaches people as
// a few messages, not hundreds. Machines take more than people's chats
// and inboxes: PagerDuty (which itself takes 120 a minute per key), and
// webhooks most, where the bound only stops a runaway.
func RateBound(k Kind) int {
	switch k {
	case Webhook:
		return 6000
	case PagerDuty:
		return 60
	}
	return 20
}

// Bounded reports whether events of this type count against the bound:
// a test a person asked for and the summary of held events always go.
func Bounded(eventType string) bool { return eventType != "test" && eventType != EventHeld }

// HeldTitle is how a summary lists a held event: its headline.
func HeldTitle(payload []byte) string {
	n, err := decode(payload, time.Time{})
	if err != nil {
		return ""
	}
	return n.headline
}
