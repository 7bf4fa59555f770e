package notify

import (
	"encoding/json"

	"github.com/tocsin/tocsin/internal/stamp"
)

// MarshalJSON writes the summary with its times in the wire format
// (package stamp), as every event leaves the service.
func (d HeldData) MarshalJSON() ([]byte, error) {
	type plain HeldData
	return json.Marshal(struct {
		plain
		From stamp.Time `json:"from"`
		To   stamp.Time `json:"to"`
	}{plain(d), stamp.Of(d.From), stamp.Of(d.To)})
}
