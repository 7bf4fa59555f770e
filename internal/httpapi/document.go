package httpapi

import (
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// documentHeaders adds what every response carries to the document: the
// request id and the rate-limit headers everywhere, Retry-After on 429.
func documentHeaders(doc *huma.OpenAPI) {
	str := &huma.Schema{Type: huma.TypeString}
	integer := &huma.Schema{Type: huma.TypeInteger, Minimum: new(0.0)}
	requestID := &huma.Param{Description: "Identifies the request in the service's logs; error bodies repeat it as error.requestId.", Schema: str}
	const budget = "the budget this request counted against: the API key's; without a valid key (or for a path that is no operation), the client address's; for a ping, the heartbeat's, or for a ping URL that names none, the client address's"
	rate := map[string]*huma.Param{
		"X-RateLimit-Limit":     {Description: "Requests allowed per minute in " + budget + ".", Schema: integer},
		"X-RateLimit-Remaining": {Description: "Requests left in that budget now.", Schema: integer},
		"X-RateLimit-Reset":     {Description: "Seconds until that budget is full again.", Schema: integer},
	}
	for _, item := range doc.Paths {
		for _, op := range []*huma.Operation{item.Get, item.Post, item.Put, item.Patch, item.Delete} {
			if op == nil {
				continue
			}
			for status, resp := range op.Responses {
				if resp.Headers == nil {
					resp.Headers = map[string]*huma.Param{}
				}
				resp.Headers["X-Request-Id"] = requestID
				for name, p := range rate {
					resp.Headers[name] = p
				}
				if _, ok := resp.Headers["Retry-After"]; !ok && (status == "429" || status == "503") {
					resp.Headers["Retry-After"] = &huma.Param{Description: "Seconds to wait before retrying.", Schema: integer, Required: true}
				}
			}
			if strings.HasPrefix(op.OperationID, "create") {
				if r := op.Responses["201"]; r != nil {
					r.Headers["Idempotent-Replayed"] = &huma.Param{Description: "true when this is the stored response to an earlier request with the same Idempotency-Key.", Schema: str}
				}
			}
		}
	}
}
