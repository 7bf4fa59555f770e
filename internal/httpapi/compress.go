package httpapi

import (
	"compress/gzip"
	"net/http"
	"strings"
	"sync"
)

// Compression: an API response is sent gzipped to a client whose
// Accept-Encoding takes gzip, once its body is worth it (minGzip bytes);
// a metrics answer of the largest size shrinks ten- to fortyfold. The
// writer decides at the body's first minGzip bytes, so a small answer,
// and every error, goes out as it is, with no compressor made for it.
// (The public status pages compress their cached renders once instead,
// internal/web/public.)

// minGzip is the smallest body worth compressing.
const minGzip = 1 << 10

// gzipLevel trades a little size for speed: the fastest level, since the
// API's JSON repeats its field names and compresses well at any level.
const gzipLevel = gzip.BestSpeed

var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzipLevel)
	return zw
}}

// compressed serves next, gzipping the response when r accepts it. Every
// response says it varies by Accept-Encoding, for caches.
func compressed(w http.ResponseWriter, r *http.Request, next http.Handler) {
	w.Header().Add("Vary", "Accept-Encoding")
	if r.Method == http.MethodHead || !acceptsGzip(r) {
		next.ServeHTTP(w, r)
		return
	}
	cw := &gzipResponse{ResponseWriter: w}
	defer cw.close()
	next.ServeHTTP(cw, r)
}

// acceptsGzip reports whether r's Accept-Encoding takes gzip (RFC 9110
// §12.5.3: gzip or *, with a weight above zero).
func acceptsGzip(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			coding = strings.TrimSpace(coding)
			if !strings.EqualFold(coding, "gzip") && coding != "*" {
				continue
			}
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// gzipResponse holds back the status and the body's first minGzip bytes,
// then sends the body gzipped, or, when it ends before that, as it is.
type gzipResponse struct {
	http.ResponseWriter
	status  int
	buf     []byte
	zw      *gzip.Writer
	decided bool
}

func (g *gzipResponse) WriteHeader(code int) {
	if g.status == 0 {
		g.status = code
	}
}

func (g *gzipResponse) Write(b []byte) (int, error) {
	if g.status == 0 {
		g.status = http.StatusOK
	}
	if g.decided {
		if g.zw != nil {
			return g.zw.Write(b)
		}
		return g.ResponseWriter.Write(b)
	}
	if len(g.buf)+len(b) < minGzip {
		g.buf = append(g.buf, b...)
		return len(b), nil
	}
	g.decide(true)
	if g.zw != nil {
		if _, err := g.zw.Write(g.buf); err != nil {
			return 0, err
		}
		g.buf = nil
		return g.zw.Write(b)
	}
	if err := g.flushBuf(); err != nil {
		return 0, err
	}
	return g.ResponseWriter.Write(b)
}

// decide sends the headers: gzipped when the body is large enough and of
// a kind that compresses, and nothing else encoded it.
func (g *gzipResponse) decide(large bool) {
	g.decided = true
	h := g.ResponseWriter.Header()
	if large && compressible(g.status, h) {
		h.Set("Content-Encoding", "gzip")
		h.Del("Content-Length")
		zw := gzipWriters.Get().(*gzip.Writer)
		zw.Reset(g.ResponseWriter)
		g.zw = zw
	}
	if g.status == 0 {
		g.status = http.StatusOK
	}
	g.ResponseWriter.WriteHeader(g.status)
}

func compressible(status int, h http.Header) bool {
	if status == http.StatusNoContent || status == http.StatusNotModified || h.Get("Content-Encoding") != "" {
		return false
	}
	ct := h.Get("Content-Type")
	return strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "text/")
}

func (g *gzipResponse) flushBuf() error {
	if len(g.buf) == 0 {
		return nil
	}
	_, err := g.ResponseWriter.Write(g.buf)
	g.buf = nil
	return err
}

// close ends the response: the held-back body as it is, or the gzip
// stream's end.
func (g *gzipResponse) close() {
	if !g.decided {
		if g.status == 0 && len(g.buf) == 0 {
			return // nothing was written: the server answers 200 itself
		}
		g.decide(false)
		_ = g.flushBuf()
		return
	}
	if g.zw != nil {
		_ = g.zw.Close()
		g.zw.Reset(nil)
		gzipWriters.Put(g.zw)
		g.zw = nil
	}
}

// Flush sends what is written so far, deciding first if need be.
func (g *gzipResponse) Flush() {
	if !g.decided {
		g.decide(len(g.buf) >= minGzip)
		if g.zw != nil {
			_, _ = g.zw.Write(g.buf)
			g.buf = nil
		} else {
			_ = g.flushBuf()
		}
	}
	if g.zw != nil {
		_ = g.zw.Flush()
	}
	if f, ok := g.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer underneath.
func (g *gzipResponse) Unwrap() http.ResponseWriter { return g.ResponseWriter }
