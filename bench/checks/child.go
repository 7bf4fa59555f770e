package checks

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// The bare loop runs in a child process (this binary re-executed with
// -bare-loop), so that its CPU time and peak memory are its own, as the
// server's are. The parent drives it through its stdin, one word a line:
//
//	start   the measured window begins
//	end     the window ends; keep running, so that the GETs due in the
//	        window can finish
//	stop    stop, and print the window's figures
//
// The child prints JSON lines on stdout: {"ready":true} once it runs, and
// its windowStats last. EOF on stdin (the parent died) also stops it.

type childOptions struct {
	targets     string
	concurrency int
	interval    time.Duration
	timeout     time.Duration
}

// commands delivers the parent's words; the channel closes at EOF.
func commands(stdin io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		s := bufio.NewScanner(stdin)
		for s.Scan() {
			ch <- strings.TrimSpace(s.Text())
		}
	}()
	return ch
}

// drive runs the protocol: it calls start and end at the parent's words
// and returns at stop (or EOF, or ctx).
func drive(ctx context.Context, stdin io.Reader, stdout io.Writer, start, end func()) error {
	if err := json.NewEncoder(stdout).Encode(map[string]bool{"ready": true}); err != nil {
		return err
	}
	cmds := commands(stdin)
	for {
		select {
		case <-ctx.Done():
			return nil
		case c, ok := <-cmds:
			switch {
			case !ok || c == "stop":
				return nil
			case c == "start":
				start()
			case c == "end":
				end()
			default:
				return fmt.Errorf("unknown command %q", c)
			}
		}
	}
}
