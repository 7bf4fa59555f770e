package incident

import (
	"encoding/json"

	"github.com/tocsin/tocsin/internal/stamp"
)

// Events leave the service as JSON; their times in the one wire format
// (package stamp). Each type shadows its time fields with stamp's: the
// shallower field wins in encoding/json, so the rest marshals as declared.

// MarshalJSON writes the event with its time in the wire format.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	return json.Marshal(struct {
		plain
		CreatedAt stamp.Time `json:"createdAt"`
	}{plain(e), stamp.Of(e.CreatedAt)})
}

// MarshalJSON writes the incident with its times in the wire format.
func (i Incident) MarshalJSON() ([]byte, error) {
	type plain Incident
	return json.Marshal(struct {
		plain
		StartedAt      stamp.Time  `json:"startedAt"`
		AcknowledgedAt *stamp.Time `json:"acknowledgedAt"`
		ResolvedAt     *stamp.Time `json:"resolvedAt"`
		CreatedAt      stamp.Time  `json:"createdAt"`
		UpdatedAt      stamp.Time  `json:"updatedAt"`
	}{plain(i), stamp.Of(i.StartedAt), stamp.Ptr(i.AcknowledgedAt), stamp.Ptr(i.ResolvedAt), stamp.Of(i.CreatedAt), stamp.Of(i.UpdatedAt)})
}

// MarshalJSON writes the update with its time in the wire format.
func (u Update) MarshalJSON() ([]byte, error) {
	type plain Update
	return json.Marshal(struct {
		plain
		At stamp.Time `json:"at"`
	}{plain(u), stamp.Of(u.At)})
}

// MarshalJSON writes the state change with its times in the wire format;
// a change confirmed when it began has the one time twice.
func (d StateChangeData) MarshalJSON() ([]byte, error) {
	type plain StateChangeData
	confirmed := d.ConfirmedAt
	if confirmed.Before(d.At) {
		confirmed = d.At
	}
	return json.Marshal(struct {
		plain
		At          stamp.Time `json:"at"`
		ConfirmedAt stamp.Time `json:"confirmedAt"`
	}{plain(d), stamp.Of(d.At), stamp.Of(confirmed)})
}
