package probe

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/netguard"
)

// lineServer answers each line it reads with "PONG <line>"; a line "quiet"
// gets no answer, "slow" its answer after 150 ms, and "bye" closes the
// connection. It greets with banner.
func lineServer(t *testing.T, banner string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				if banner != "" {
					_, _ = c.Write([]byte(banner))
				}
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					switch line := sc.Text(); line {
					case "quiet":
					case "slow":
						time.Sleep(150 * time.Millisecond)
						_, _ = c.Write([]byte("PONG slow\n"))
					case "bye":
						return
					default:
						_, _ = c.Write([]byte("PONG " + line + "\n"))
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

func tcpMon(t *testing.T, addr, send, expect string) monitor.Monitor {
	host, port := splitAddr(t, addr)
	return monitor.Monitor{ID: "mon_tcp", Type: monitor.TypeTCP, Config: monitor.Config{
		Host: host, Port: port, Send: send, Expect: expect, TimeoutSeconds: 1,
	}}
}

func TestTCP(t *testing.T) {
	t.Parallel()
	addr := lineServer(t, "")
	banner := lineServer(t, "220 ready\r\n")
	refused := closedPort(t)
	p := New(Options{})
	cases := []struct {
		name, addr, send, expect string
		result                   monitor.Result
		reason                   string
	}{
		{"connect only", addr, "", "", monitor.ResultUp, ""},
		{"send and expect", addr, "hello\n", "PONG hello", monitor.ResultUp, ""},
		{"banner", banner, "", "220 ready", monitor.ResultUp, ""},
		{"wrong answer then close", addr, "hello\nbye\n", "PONG goodbye", monitor.ResultDown, "expected text not received (the target closed the connection after 11 bytes)"},
		{"no answer", addr, "quiet\n", "PONG", monitor.ResultDown, "expected text not received within 1s"},
		{"refused", refused, "", "", monitor.ResultDown, "connection refused to " + refused},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			obs := check(t, p, tcpMon(t, c.addr, c.send, c.expect))
			want(t, obs, c.result, c.reason)
			if c.result == monitor.ResultUp && (obs.Phases.Connect <= 0 || obs.Latency < obs.Phases.Connect) {
				t.Fatalf("phases %+v, latency %s", obs.Phases, obs.Latency)
			}
		})
	}
}

// TestTCPExpectAcrossReads: the expected text may arrive split over reads.
func TestTCPExpectAcrossReads(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = c.Write([]byte(strings.Repeat("-", 5000) + "SSH-2"))
		time.Sleep(50 * time.Millisecond)
		_, _ = c.Write([]byte(".0-server\r\n"))
		_, _ = io.Copy(io.Discard, c) // open until the check is done with it
	}()
	want(t, check(t, New(Options{}), tcpMon(t, l.Addr().String(), "", "SSH-2.0-")), monitor.ResultUp, "")
}

func TestTCPBlockedByPolicy(t *testing.T) {
	t.Parallel()
	addr := lineServer(t, "")
	_, port := splitAddr(t, addr)
	p := New(Options{Policy: netguard.Policy{BlockPrivate: true}})
	for _, host := range []string{"127.0.0.1", "localhost"} {
		m := tcpMon(t, addr, "", "")
		m.Config.Host, m.Config.Port = host, port
		want(t, check(t, p, m), monitor.ResultDown, ReasonBlocked)
	}
}

// TestSlowAnswerIsDegraded: degradedLatencyMs applies to every type, not
// only http.
func TestSlowAnswerIsDegraded(t *testing.T) {
	t.Parallel()
	addr := lineServer(t, "")
	m := tcpMon(t, addr, "slow\n", "PONG slow")
	m.Config.DegradedLatencyMs = 50
	want(t, check(t, New(Options{}), m), monitor.ResultDegraded, "above the degraded threshold of 50 ms")
	m.Config.DegradedLatencyMs = 900
	want(t, check(t, New(Options{}), m), monitor.ResultUp, "")
}
