package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/tocsin/tocsin/internal/errs"
)

// maxNULDetails bounds the fields one answer lists; a body may hold
// thousands of strings.
const maxNULDetails = 20

// cleanBody judges a request body once, before anything decodes it: its
// media type (application/json, 415 otherwise), its encoding (JSON text is
// UTF-8: invalid bytes are 400, where encoding/json would silently turn
// them into U+FFFD) and its strings (a NUL, written \u0000, in any key or
// value is 422 naming each field). Later readers get the bytes it read.
// An empty body is left to the schema: optional bodies may be omitted.
func (s *Server) cleanBody(ctx huma.Context, next func(huma.Context)) {
	op := ctx.Operation()
	if op.RequestBody == nil || op.Metadata[metaRawBody] == true {
		next(ctx)
		return
	}
	if op.BodyReadTimeout > 0 {
		ctx.SetReadDeadline(time.Now().Add(op.BodyReadTimeout))
	}
	body, err := io.ReadAll(io.LimitReader(ctx.BodyReader(), maxBodyBytes+1))
	ctx.SetReadDeadline(time.Time{})
	if err != nil {
		writeErr(ctx, huma.NewError(http.StatusBadRequest, "the request body could not be read"))
		return
	}
	if e := judgeBody(ctx.Header("Content-Type"), op.Method == http.MethodPatch, body); e != nil {
		writeErr(ctx, e)
		return
	}
	next(&bodyContext{humaContext: ctx, body: bytes.NewReader(body)})
}

// judgeBody returns why a request body is refused, or nil. A PATCH body
// is a JSON merge patch, so it may also say so by its media type.
func judgeBody(contentType string, patch bool, body []byte) error {
	switch {
	case len(body) == 0:
		return nil
	case len(body) > maxBodyBytes:
		return huma.NewError(http.StatusRequestEntityTooLarge, "the request body is too large")
	case !jsonMediaType(contentType, patch):
		return huma.NewError(http.StatusUnsupportedMediaType, "")
	case !utf8.Valid(body):
		return &ErrorResponse{status: http.StatusBadRequest, Err: ErrorObject{Code: "bad_request",
			Message: "the request body is not valid JSON: JSON text must be UTF-8"}}
	}
	if ptrs := nulPointers(body); len(ptrs) > 0 {
		e := &errs.Error{Kind: errs.KindInvalid, Message: "the request has invalid fields"}
		for _, p := range ptrs {
			e.Fields = append(e.Fields, errs.FieldError{Pointer: p, Message: "must not contain NUL (\\u0000)"})
		}
		return e
	}
	return nil
}

// jsonMediaType accepts application/json, and on a PATCH
// application/merge-patch+json (RFC 7396), with parameters, as long as a
// charset, if named, is UTF-8.
func jsonMediaType(ct string, patch bool) bool {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" && !(patch && mt == "application/merge-patch+json") {
		return false
	}
	cs, ok := params["charset"]
	return !ok || strings.EqualFold(cs, "utf-8")
}

// nulPointers returns the JSON pointer of each key or string value that
// holds NUL, at most maxNULDetails. Most bodies are found clean by one
// scan of their bytes. A body that is not one JSON value gives none: its
// decoder reports it.
func nulPointers(body []byte) []string {
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return nil
	}
	type frame struct {
		object  bool
		keyNext bool // in an object: the next token is a key
		key     string
		index   int
	}
	var stack []frame
	pointer := func() string {
		if len(stack) == 0 {
			return "/"
		}
		var b strings.Builder
		for _, f := range stack {
			b.WriteByte('/')
			if f.object {
				b.WriteString(strings.ReplaceAll(strings.ReplaceAll(f.key, "~", "~0"), "/", "~1"))
			} else {
				b.WriteString(strconv.Itoa(f.index))
			}
		}
		return b.String()
	}
	// advance moves the innermost container past a value.
	advance := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].keyNext = true
			} else {
				stack[n-1].index++
			}
		}
	}
	var out []string
	add := func() {
		// A key with NUL and its value share a pointer: name it once.
		if len(out) == maxNULDetails {
			return
		}
		if p := pointer(); len(out) == 0 || out[len(out)-1] != p {
			out = append(out, p)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for started := false; !started || len(stack) > 0; started = true {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].keyNext {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:n-1]
				advance()
				continue
			}
			stack[n-1].key, stack[n-1].keyNext = tok.(string), false
			if strings.IndexByte(stack[n-1].key, 0) >= 0 {
				add()
			}
			continue
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{object: true, keyNext: true})
			case '[':
				stack = append(stack, frame{})
			default: // ']'; '}' ends an object where a key could come
				stack = stack[:len(stack)-1]
				advance()
			}
		case string:
			if strings.IndexByte(t, 0) >= 0 {
				add()
			}
			advance()
		default:
			advance()
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil // more than one value
	}
	return out
}

// bodyContext hands the handler the body cleanBody already read.
type bodyContext struct {
	humaContext
	body *bytes.Reader
}

func (b *bodyContext) BodyReader() io.Reader { return b.body }
