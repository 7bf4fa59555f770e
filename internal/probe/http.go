package probe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
)

// maxRedirects bounds a followed redirect chain.
const maxRedirects = 10

var errTooManyRedirects = errors.New("too many redirects")

func followRedirects(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return errTooManyRedirects
	}
	return nil
}

func stopAtRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// http runs an HTTP check: one request on a new connection, the first
// monitor.MaxAssertedBody bytes of the body read and asserted on.
func (c *checkRun) http(ctx context.Context) *failure {
	cfg := c.cfg
	t := newTracker(c.start)
	method := cfg.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if cfg.Body != "" {
		body = strings.NewReader(cfg.Body)
	}
	req, err := http.NewRequestWithContext(t.trace(ctx), method, cfg.URL, body)
	if err != nil {
		return unknown("invalid check configuration: the URL or method is not usable")
	}
	req.Header.Set("User-Agent", UserAgent)
	for k, v := range cfg.Headers {
		req.Header.Set(k, v)
	}
	if a := cfg.Auth; a != nil {
		switch a.Type {
		case monitor.AuthBasic:
			req.SetBasicAuth(a.Username, a.Password)
		case monitor.AuthBearer:
			req.Header.Set("Authorization", "Bearer "+a.Token)
		case monitor.AuthHeader:
			req.Header.Set(a.Header, a.Value)
		}
	}
	client := &http.Client{Transport: c.p.transport, CheckRedirect: followRedirects}
	if cfg.FollowRedirects != nil && !*cfg.FollowRedirects {
		client.CheckRedirect = stopAtRedirect
	}

	resp, err := client.Do(req)
	c.obs.Phases = t.Phases()
	if err != nil {
		if errors.Is(err, errTooManyRedirects) {
			return down(fmt.Sprintf("too many redirects (more than %d)", maxRedirects))
		}
		return c.classify(ctx, err, t.Stage(), t.Where(""))
	}
	defer resp.Body.Close()
	c.obs.StatusCode = resp.StatusCode
	t.set(stageBody)
	data, err := io.ReadAll(io.LimitReader(resp.Body, monitor.MaxAssertedBody+1))
	c.obs.Latency = time.Since(c.start)
	c.obs.Phases = t.Phases()
	if err != nil {
		return c.classify(ctx, err, stageBody, t.Where(""))
	}
	truncated := len(data) > monitor.MaxAssertedBody
	if truncated {
		data = data[:monitor.MaxAssertedBody]
	}

	ok, outcomes := monitor.EvaluateHTTP(cfg, resp.StatusCode, data, truncated)
	c.obs.Assertions = outcomes
	if !ok {
		for _, o := range outcomes {
			if o.Passed {
				continue
			}
			if o.Kind == "status" {
				return down(fmt.Sprintf("status %d not in %s", resp.StatusCode, statusRanges(cfg.ExpectedStatusCodes)))
			}
			return down(o.Reason)
		}
	}
	return nil
}

// statusRanges prints the accepted codes as "200-299, 301".
func statusRanges(rs []monitor.StatusRange) string {
	if len(rs) == 0 {
		rs = monitor.DefaultExpectedStatus
	}
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(r.From))
		if r.To != r.From {
			b.WriteString("-" + strconv.Itoa(r.To))
		}
	}
	return b.String()
}
