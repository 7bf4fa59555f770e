package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/stamp"
)

// Delivery is an event on its way to a channel, with every attempt.
type Delivery struct {
	ID             string            `json:"id" example:"dlv_01JD5Z8Q3C4M6V9X2B7N1K0PQR" doc:"The delivery id, sent as X-Service-Delivery and the same on every attempt: receivers deduplicate on it."`
	ChannelID      string            `json:"channelId"`
	EventID        string            `json:"eventId"`
	EventType      string            `json:"eventType"`
	Status         string            `json:"status" enum:"pending,succeeded,failed,held" doc:"pending: due now or after a backoff; succeeded: the receiver answered 2xx; failed: retries ran out (about 24 hours) or the channel was disabled; held: held back by the channel's rate bound and told of in a summary (heldBy)."`
	AttemptCount   int               `json:"attemptCount"`
	NextAttemptAt  *stamp.Time       `json:"nextAttemptAt" nullable:"true" doc:"pending: when the next attempt is due; null otherwise."`
	GiveUpAt       stamp.Time        `json:"giveUpAt" doc:"When retries end and a pending delivery fails."`
	LastStatusCode *int              `json:"lastStatusCode" doc:"The last HTTP status the receiver answered; null if none."`
	LastError      string            `json:"lastError" doc:"Why the last attempt failed; empty after a success."`
	HeldBy         string            `json:"heldBy,omitempty" doc:"A delivery that was held: the summary delivery that told of it (kept when it is redelivered)."`
	CreatedAt      stamp.Time        `json:"createdAt"`
	UpdatedAt      stamp.Time        `json:"updatedAt"`
	CompletedAt    *stamp.Time       `json:"completedAt" nullable:"true" doc:"When it succeeded or failed; null while pending."`
	Attempts       []DeliveryAttempt `json:"attempts" doc:"Attempts, oldest first (the latest 50)."`
}

// DeliveryAttempt is one try at a delivery.
type DeliveryAttempt struct {
	N          int        `json:"n" doc:"1 for the first attempt."`
	Node       string     `json:"node" doc:"The Tocsin node that made it."`
	StartedAt  stamp.Time `json:"startedAt"`
	DurationMs float64    `json:"durationMs"`
	StatusCode *int       `json:"statusCode" doc:"The receiver's HTTP status; null without one (no answer, e-mail)."`
	Error      string     `json:"error" doc:"Empty for a success."`
}

func optInt(v int) *int {
	if v == 0 {
		return nil
	}
	return &v
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func toDelivery(d *notify.Delivery) Delivery {
	out := Delivery{ID: d.ID, ChannelID: d.ChannelID, EventID: d.EventID, EventType: d.EventType, Status: string(d.Status),
		AttemptCount: d.Attempts, GiveUpAt: stamp.Of(d.GiveUpAt), LastStatusCode: optInt(d.LastStatusCode), LastError: d.LastError,
		HeldBy: d.HeldBy, CreatedAt: stamp.Of(d.CreatedAt), UpdatedAt: stamp.Of(d.UpdatedAt), CompletedAt: stamp.Ptr(optTime(d.CompletedAt)),
		Attempts: make([]DeliveryAttempt, 0, len(d.Log))}
	if d.Status == notify.Pending {
		out.NextAttemptAt = stamp.Ptr(optTime(d.NextAttemptAt))
	}
	for _, a := range d.Log {
		out.Attempts = append(out.Attempts, DeliveryAttempt{N: a.N, Node: a.Node, StartedAt: stamp.Of(a.StartedAt),
			DurationMs: float64(a.Duration.Microseconds()) / 1000, StatusCode: optInt(a.StatusCode), Error: a.Error})
	}
	return out
}

// DeliveryID names one delivery.
type DeliveryID struct {
	InWorkspace
	ID string `path:"id" maxLength:"64" doc:"Delivery id (dlv_…)."`
}

type listDeliveriesInput struct {
	ChannelID
	Cursor string `query:"cursor" maxLength:"512" doc:"nextCursor from the previous page."`
	Limit  int    `query:"limit" minimum:"1" maximum:"100" default:"50" doc:"Page size, 1 to 100."`
	Status string `query:"status" enum:"pending,succeeded,failed,held" doc:"Only deliveries in this status."`
}

type deliveryBody struct {
	Body Delivery
}

var opListNotificationChannelDeliveries = op(huma.Operation{OperationID: "listNotificationChannelDeliveries", Method: http.MethodGet,
	Path: Prefix + "/notification-channels/{id}/deliveries", Summary: "List a channel's deliveries",
	Description: "Newest first, each with its attempts (status, duration, error).", Tags: tagsChannels},
	account.ScopeNotificationsRead, http.StatusNotFound, http.StatusUnprocessableEntity)

func (s *Server) listNotificationChannelDeliveries(ctx context.Context, in *listDeliveriesInput) (*struct{ Body List[Delivery] }, error) {
	p, err := s.app.ListDeliveries(ctx, actorFrom(ctx), in.ID, in.Status, app.PageRequest{Cursor: in.Cursor, Limit: in.Limit})
	if err != nil {
		return nil, err
	}
	return &struct{ Body List[Delivery] }{Body: toList(p, toDelivery)}, nil
}

var opTestNotificationChannel = op(huma.Operation{OperationID: "testNotificationChannel", Method: http.MethodPost,
	Path: Prefix + "/notification-channels/{id}/test", Summary: "Send a channel a test event",
	Description: "Sends a test event to this channel, whatever its filters, and returns its delivery, pending: " +
		"it goes out at once, and GET /deliveries/{id} shows how it went. A disabled channel: 409 conflict.",
	Tags: tagsChannels, DefaultStatus: http.StatusAccepted}, account.ScopeNotificationsWrite, http.StatusNotFound, http.StatusConflict)

func (s *Server) testNotificationChannel(ctx context.Context, in *ChannelID) (*deliveryBody, error) {
	return oneDelivery(s.app.TestChannel(ctx, actorFrom(ctx), in.ID))
}

var opGetDelivery = op(huma.Operation{OperationID: "getDelivery", Method: http.MethodGet, Path: Prefix + "/deliveries/{id}",
	Summary: "Get a delivery", Tags: tagsChannels}, account.ScopeNotificationsRead, http.StatusNotFound)

func (s *Server) getDelivery(ctx context.Context, in *DeliveryID) (*deliveryBody, error) {
	return oneDelivery(s.app.GetDelivery(ctx, actorFrom(ctx), in.ID))
}

var opRedeliver = op(huma.Operation{OperationID: "redeliver", Method: http.MethodPost, Path: Prefix + "/deliveries/{id}/redeliver",
	Summary: "Send a delivery again",
	Description: "Sends a succeeded, failed or held delivery again, with the same id (a receiver that handled it sees a duplicate), " +
		"retried for another 24 hours. A pending one, or one whose channel is disabled: 409 conflict.",
	Tags: tagsChannels, DefaultStatus: http.StatusAccepted}, account.ScopeNotificationsWrite, http.StatusNotFound, http.StatusConflict)

func (s *Server) redeliver(ctx context.Context, in *DeliveryID) (*deliveryBody, error) {
	return oneDelivery(s.app.Redeliver(ctx, actorFrom(ctx), in.ID))
}

// oneDelivery is the response of an operation that returns one delivery.
func oneDelivery(d *notify.Delivery, err error) (*deliveryBody, error) {
	if err != nil {
		return nil, err
	}
	return &deliveryBody{Body: toDelivery(d)}, nil
}
