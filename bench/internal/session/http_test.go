package session

import (
	"net/http"
	"testing"
)

func TestBareHeader(t *testing.T) {
	h := http.Header{"Content-Type": {"text/html"}, "Date": {"x"}, "Content-Length": {"9"}, "Etag": {`"a"`}}
	got := BareHeader(h)
	if got.Get("Date") != "" || got.Get("Content-Length") != "" || got.Get("ETag") != `"a"` || got.Get("Content-Type") != "text/html" {
		t.Errorf("BareHeader = %v", got)
	}
	if h.Get("Date") == "" {
		t.Error("BareHeader changed its argument")
	}
}
