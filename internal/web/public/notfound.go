package public

import "net/http"

func (p *Pages) notFound(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header(), pageCSP)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		_, _ = w.Write(notFoundPage)
	}
}

var notFoundPage = RenderNotFound()

// RenderNotFound renders a small page for a status page that does not
// exist (or a path under it that does not): it needs no stylesheet.
func RenderNotFound() []byte {
	b, err := execute("notfound.html", view{})
	if err != nil {
		panic(err) // a fixed template over no data
	}
	return b
}
