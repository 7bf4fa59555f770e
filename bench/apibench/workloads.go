package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"sync"
	"sync/atomic"
)

// fixed sends the same prepared request on every call; a request without a
// body can be sent again once its response body is closed.
type fixed struct{ reqs []*http.Request }

func newFixed(concurrency int, method, url, key string) (*fixed, error) {
	f := &fixed{}
	for range concurrency {
		req, err := http.NewRequest(method, url, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Accept", "application/json")
		f.reqs = append(f.reqs, req)
	}
	return f, nil
}

func (f *fixed) request(w int) *http.Request                 { return f.reqs[w] }
func (f *fixed) answered(int, *http.Request, *http.Response) {}
func (f *fixed) failed(int, *http.Request)                   {}

// monitorQuota is a workspace's default monitor quota; a create beyond it
// gets 402 quota_exceeded.
const monitorQuota = 1000

// postWorkspace is a workspace the POST load creates monitors in, with its
// own owner and key (the CLI makes one user per workspace).
type postWorkspace struct {
	key  string
	used atomic.Int64 // monitors that exist or may: creates sent, not deleted
}

type created struct {
	ws *postWorkspace
	id string
}

// creates is the POST /api/v1/monitors load. The monitor quota of a
// workspace would refuse creates after 1000, so it fills workspaces one
// after the other (all clients in the same one at a time, like one tenant),
// and deletes what it created after each phase so every round starts from
// the same state.
type creates struct {
	url  string
	body []byte

	mu      sync.Mutex // guards wss when it grows, between phases
	wss     []*postWorkspace
	cursor  atomic.Int64 // index of the workspace being filled
	current []*postWorkspace
	made    [][]created // by worker
}

func newCreates(concurrency int, base string) *creates {
	return &creates{
		url:     base + "/api/v1/monitors",
		body:    []byte(`{"type":"http","name":"bench","config":{"url":"https://example.com/health"}}`),
		current: make([]*postWorkspace, concurrency),
		made:    make([][]created, concurrency),
	}
}

func (c *creates) request(w int) *http.Request {
	for {
		i := c.cursor.Load()
		if i >= int64(len(c.wss)) {
			return nil
		}
		ws := c.wss[i]
		if ws.used.Add(1) > monitorQuota {
			ws.used.Add(-1)
			c.cursor.CompareAndSwap(i, i+1)
			continue
		}
		req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(c.body))
		if err != nil {
			panic(err) // the URL was checked when the target was set up
		}
		req.Header.Set("Authorization", "Bearer "+ws.key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		c.current[w] = ws
		return req
	}
}

func (c *creates) answered(w int, _ *http.Request, resp *http.Response) {
	ws := c.current[w]
	if resp.StatusCode != http.StatusCreated {
		ws.used.Add(-1)
		return
	}
	c.made[w] = append(c.made[w], created{ws: ws, id: path.Base(resp.Header.Get("Location"))})
}

// failed keeps the slot taken: the monitor may have been created.
func (c *creates) failed(int, *http.Request) {}

// capacity is how many more creates fit in the workspaces there are.
func (c *creates) capacity() int {
	n := 0
	for _, ws := range c.wss[c.cursor.Load():] {
		n += monitorQuota - int(ws.used.Load())
	}
	return n
}

func (c *creates) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.wss = append(c.wss, &postWorkspace{key: key})
}

// cleanup deletes every monitor the phase created, with as many clients as
// the load had, and starts filling from the first workspace again.
func (c *creates) cleanup(ctx context.Context, rt http.RoundTripper) (deleted, failed int, err error) {
	var all []created
	for w := range c.made {
		all = append(all, c.made[w]...)
		c.made[w] = c.made[w][:0]
	}
	var next atomic.Int64
	var nDel, nFail atomic.Int64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for range len(c.current) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(len(all)) {
					return
				}
				m := all[i]
				req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url+"/"+m.id, nil)
				if err != nil {
					once.Do(func() { firstErr = err })
					return
				}
				req.Header.Set("Authorization", "Bearer "+m.ws.key)
				resp, err := rt.RoundTrip(req)
				if err != nil {
					nFail.Add(1)
					once.Do(func() { firstErr = err })
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusNoContent, http.StatusNotFound:
					m.ws.used.Add(-1)
					nDel.Add(1)
				default:
					nFail.Add(1)
					once.Do(func() { firstErr = fmt.Errorf("DELETE %s: %s", m.id, resp.Status) })
				}
			}
		})
	}
	wg.Wait()
	c.cursor.Store(0)
	if err := ctx.Err(); err != nil {
		return int(nDel.Load()), int(nFail.Load()), err
	}
	return int(nDel.Load()), int(nFail.Load()), firstErr
}
