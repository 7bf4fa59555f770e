package httpapi

import (
	"strings"

	"github.com/danielgtaylor/huma/v2"
)

// documentHeaders adds what every response carries to the document: the
// request id everywhere, the rate-limit headers on authenticated
// operations, Retry-After on 429.
func documentHeaders(doc *huma.OpenAPI) {
	str := &huma.Schema{Type: huma.TypeString}
	integer := &huma.Schema{Type: huma.TypeInteger, Minimum: new(0.0)}
	requestID := &huma.Param{Description: "Identifies the request in the service's logs; error bodies repeat it as error.requestId.", Schema: str}
	rate := map[string]*huma.Param{
		"X-RateLimit-Limit":     {Description: "Requests allowed per minute for this API key.", Schema: integer},
		"X-RateLimit-Remaining": {Description: "Requests left in the current window.", Schema: integer},
		"X-RateLimit-Reset":     {Description: "Seconds until the full budget is available again.", Schema: integer},
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
				if len(op.Security) == 0 || status == "401" {
					continue
				}
				for name, p := range rate {
					resp.Headers[name] = p
				}
				if status == "429" {
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
