package public

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// BadgeColor is a badge's message colour, "#rgb" or "#rrggbb".
type BadgeColor string

// shields.io's named colours.
const (
	BadgeBrightGreen BadgeColor = "#4c1"
	BadgeGreen       BadgeColor = "#97ca00"
	BadgeYellow      BadgeColor = "#dfb317"
	BadgeOrange      BadgeColor = "#fe7d37"
	BadgeRed         BadgeColor = "#e05d44"
	BadgeBlue        BadgeColor = "#007ec6"
	BadgeGrey        BadgeColor = "#9f9f9f"
	badgeLabel                  = "#555"
)

// Badge renders an SVG badge in shields.io's "flat" look: a grey label
// half and a coloured message half, rounded, in Verdana (DejaVu Sans
// where Verdana is missing) at 11px. Each half is as wide as its text
// measured with a per-character width table, and textLength holds the
// text to it in any font. It has role="img", an aria-label and a title
// ("label: message"); all text is escaped.
func Badge(label, message string, color BadgeColor) []byte {
	const pad = 5
	lw, mw := textWidth(label), textWidth(message)
	left, right := lw+2*pad, mw+2*pad
	total := left + right
	title := label + ": " + message
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="20" role="img" aria-label="%s">`, total, esc(title))
	fmt.Fprintf(&b, `<title>%s</title>`, esc(title))
	b.WriteString(`<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>`)
	fmt.Fprintf(&b, `<clipPath id="r"><rect width="%d" height="20" rx="3" fill="#fff"/></clipPath>`, total)
	fmt.Fprintf(&b, `<g clip-path="url(#r)"><rect width="%d" height="20" fill="%s"/><rect x="%d" width="%d" height="20" fill="%s"/><rect width="%d" height="20" fill="url(#s)"/></g>`,
		left, badgeLabel, left, right, esc(string(colorOr(color))), total)
	b.WriteString(`<g fill="#fff" text-anchor="middle" font-family="Verdana,Geneva,DejaVu Sans,sans-serif" text-rendering="geometricPrecision" font-size="110">`)
	for _, t := range []struct {
		text string
		x, w int
	}{{label, 10*pad + 5*lw, lw}, {message, 10*left + 10*pad + 5*mw, mw}} {
		fmt.Fprintf(&b, `<text aria-hidden="true" x="%d" y="150" fill="#010101" fill-opacity=".3" transform="scale(.1)" textLength="%d">%s</text>`, t.x, 10*t.w, esc(t.text))
		fmt.Fprintf(&b, `<text x="%d" y="140" transform="scale(.1)" fill="#fff" textLength="%d">%s</text>`, t.x, 10*t.w, esc(t.text))
	}
	b.WriteString(`</g></svg>`)
	return b.Bytes()
}

// StateBadge is a component's state: its name and its status in words.
func StateBadge(c statuspage.Component) []byte {
	color := BadgeGrey
	switch c.Status {
	case statuspage.Operational:
		color = BadgeBrightGreen
	case statuspage.Degraded:
		color = BadgeYellow
	case statuspage.Outage:
		color = BadgeRed
	case statuspage.UnderMaint:
		color = BadgeBlue
	}
	return Badge(c.Name, c.Status.Words(), color)
}

// ErrUnknownWindow is UptimeBadge's answer to a window other than 24h,
// 7d and 30d.
var ErrUnknownWindow = errors.New("statuspage: uptime window is not 24h, 7d or 30d")

// UptimeBadge is a component's availability over 24h, 7d or 30d: "no
// data" in grey when nothing is known.
func UptimeBadge(c statuspage.Component, window string) ([]byte, error) {
	var u *float64
	switch window {
	case "24h":
		u = c.Uptime24h
	case "7d":
		u = c.Uptime7d
	case "30d":
		u = c.Uptime30d
	default:
		return nil, ErrUnknownWindow
	}
	label := c.Name + " uptime " + window
	if u == nil {
		return Badge(label, "no data", BadgeGrey), nil
	}
	color := BadgeRed
	switch a := *u; {
	case a >= 0.999:
		color = BadgeBrightGreen
	case a >= 0.99:
		color = BadgeGreen
	case a >= 0.95:
		color = BadgeYellow
	case a >= 0.90:
		color = BadgeOrange
	}
	return Badge(label, statuspage.Percent(*u), color), nil
}

func colorOr(c BadgeColor) BadgeColor {
	if accentRE.MatchString(string(c)) || shortHexRE.MatchString(string(c)) {
		return c
	}
	return BadgeGrey
}

func esc(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s)) // writes to memory: cannot fail
	return b.String()
}

// textWidth is the text's width in pixels at 11px, rounded up to an even
// number as shields.io does (the halves then sit on the pixel grid).
func textWidth(s string) int {
	var w float64
	for _, r := range s {
		switch {
		case r >= 32 && r < 127:
			w += charWidths[r-32]
		case r < 32:
			// control characters take no room
		case r >= 0x2e80:
			w += 11 // CJK and other wide scripts: about an em
		default:
			w += 7
		}
	}
	n := int(math.Ceil(w))
	if n%2 == 1 {
		n++
	}
	return n
}

// charWidths are the advances of ASCII 32–126 in DejaVu Sans at 11px,
// measured in Chromium with a canvas's measureText. Verdana, the badge's
// first font, has nearly the same metrics (DejaVu Sans descends from
// Bitstream Vera, drawn to them).
var charWidths = [95]float64{
	3.5, 4.41, 5.06, 9.22, 7, 10.45, 8.58, 3.02, 4.29, 4.29, 5.5, 9.22, 3.5, 3.97, 3.5, 3.71, // space to /
	7, 7, 7, 7, 7, 7, 7, 7, 7, 7, // 0–9
	3.71, 3.71, 9.22, 9.22, 9.22, 5.84, 11, // : to @
	7.52, 7.55, 7.68, 8.47, 6.95, 6.33, 8.52, 8.27, 3.24, 3.24, 7.21, 6.13, 9.49, // A–M
	8.23, 8.66, 6.63, 8.66, 7.64, 6.98, 6.72, 8.05, 7.52, 10.88, 7.54, 6.72, 7.54, // N–Z
	4.29, 3.71, 4.29, 9.22, 5.5, 5.5, // [ to `
	6.74, 6.98, 6.05, 6.98, 6.77, 3.87, 6.98, 6.97, 3.06, 3.06, 6.37, 3.06, 10.72, // a–m
	6.97, 6.73, 6.98, 6.98, 4.52, 5.73, 4.31, 6.97, 6.51, 9, 6.51, 6.51, 5.77, // n–z
	7, 3.71, 7, 9.22, // { to ~
}

// serveBadge answers /badge/{component}.svg: the component's state, or with
// ?uptime=24h|7d|30d its availability over that span.
func (p *Pages) serveBadge(w http.ResponseWriter, r *http.Request, pg *page, name string) error {
	id, ok := strings.CutSuffix(name, ".svg")
	window := r.URL.Query().Get("uptime")
	if !ok || (window != "" && window != "24h" && window != "7d" && window != "30d") {
		return errs.ErrNotFound
	}
	rd, asOf, err := pg.rendering("badge|"+id+"|"+window, func(v app.StatusView, _ app.PublicPageConfig) ([]byte, string, error) {
		for _, g := range v.Page.Groups {
			for _, c := range g.Components {
				if c.ID != id {
					continue
				}
				if window == "" {
					return StateBadge(c), "image/svg+xml", nil
				}
				b, err := UptimeBadge(c, window)
				return b, "image/svg+xml", err
			}
		}
		return nil, "", errs.ErrNotFound
	})
	if err != nil {
		return errs.ErrNotFound // whatever kept the badge from being made
	}
	securityHeaders(w.Header(), imageCSP)
	w.Header().Del("X-Frame-Options")
	p.send(w, r, rd, badgeCache, asOf)
	return nil
}
