package api

import (
	"bytes"
	"net/http"
	"sync"
	"sync/atomic"
)

// fixed sends the same prepared request on every call; a request without a
// body can be sent again once its response body is closed.
type fixed struct{ reqs []*http.Request }

// newFixed prepares one request per client; client w sends key w mod
// len(keys).
func newFixed(concurrency int, method, url string, keys ...string) (*fixed, error) {
	f := &fixed{}
	for w := range concurrency {
		req, err := http.NewRequest(method, url, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", "Bearer "+keys[w%len(keys)])
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
	used atomic.Int64 // creates sent that succeeded or may have
}

// creates is the POST /api/v1/monitors load. The monitor quota of a
// workspace refuses creates after 1000, so it fills workspaces one after
// the other: all clients in the same one at a time, like one tenant adding
// monitors. Workspaces are never emptied; deleting would leave PostgreSQL
// dead index entries that every later quota count walks through, so rounds
// would slow down as autovacuum fell behind.
type creates struct {
	url  string
	body []byte

	mu      sync.Mutex // guards wss when it grows, between phases
	wss     []*postWorkspace
	cursor  atomic.Int64 // index of the workspace being filled
	current []*postWorkspace
}

func newCreates(concurrency int, base string) *creates {
	return &creates{
		url:     base + "/api/v1/monitors",
		body:    []byte(`{"type":"http","name":"bench","paused":true,"config":{"url":"http://127.0.0.1:9/health"}}`),
		current: make([]*postWorkspace, concurrency),
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

// answered gives back the slot of a create that was refused.
func (c *creates) answered(w int, _ *http.Request, resp *http.Response) {
	if resp.StatusCode != http.StatusCreated {
		c.current[w].used.Add(-1)
	}
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
