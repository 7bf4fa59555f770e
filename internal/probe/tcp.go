package probe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// maxExpectRead bounds how much a TCP check reads looking for Expect.
const maxExpectRead = 64 << 10

// dial connects to addr through the policy, recording DNS and connect
// phases. The connection's deadline is the check's, and a cancellation of
// ctx interrupts any read or write on it.
func (c *checkRun) dial(ctx context.Context, t *tracker, addr string) (net.Conn, func(), error) {
	conn, err := c.p.dialer.DialContext(t.trace(ctx), "tcp", addr)
	c.obs.Phases = t.Phases()
	if err != nil {
		return nil, nil, err
	}
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	return conn, func() { stop(); conn.Close() }, nil
}

// tcp connects to host:port and, when configured, sends Send and waits for
// Expect among the first 64 KiB the target answers.
func (c *checkRun) tcp(ctx context.Context) *failure {
	t := newTracker(c.start)
	addr := net.JoinHostPort(c.cfg.Host, strconv.Itoa(c.cfg.Port))
	conn, closeConn, err := c.dial(ctx, t, addr)
	if err != nil {
		return c.classify(ctx, err, t.Stage(), t.Where(addr))
	}
	defer closeConn()
	if c.cfg.Send != "" {
		t.set(stageSend)
		if _, err := io.WriteString(conn, c.cfg.Send); err != nil {
			return c.classify(ctx, err, stageSend, t.Where(addr))
		}
	}
	if c.cfg.Expect == "" {
		c.obs.Latency = time.Since(c.start)
		return nil
	}
	t.set(stageExchange)
	want := []byte(c.cfg.Expect)
	var buf []byte
	chunk := make([]byte, 4096)
	for len(buf) < maxExpectRead {
		n, err := conn.Read(chunk[:min(len(chunk), maxExpectRead-len(buf))])
		if n > 0 && c.obs.Phases.FirstByte == 0 {
			c.obs.Phases.FirstByte = time.Since(c.start)
		}
		buf = append(buf, chunk[:n]...)
		// Look only where a new match can be: the new bytes and the tail
		// of the old ones a match could straddle.
		if bytes.Contains(buf[max(0, len(buf)-n-len(want)+1):], want) {
			c.obs.Latency = time.Since(c.start)
			return nil
		}
		if err != nil {
			c.obs.Latency = time.Since(c.start)
			switch {
			case errors.Is(err, io.EOF):
				return down(fmt.Sprintf("expected text not received (the target closed the connection after %d bytes)", len(buf)))
			case isDeadline(ctx, err):
				// A caller's cancellation also lands here; judge makes it unknown.
				return down(fmt.Sprintf("expected text not received within %s (%d bytes read)", fmtDuration(c.timeout), len(buf)))
			}
			return c.classify(ctx, err, stageExchange, t.Where(addr))
		}
	}
	c.obs.Latency = time.Since(c.start)
	return down(fmt.Sprintf("expected text not received in the first %d KiB", maxExpectRead>>10))
}
