package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tocsin/tocsin/bench/internal/child"
	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/bench/internal/tocsin"
)

// bench owns the work directory, the receiver and the databases of a run.
type bench struct {
	c    config
	log  io.Writer
	dir  string
	self string // this binary, re-executed as the receiver
	bin  tocsin.Binary
	keys string // the keyring of every phase's database and server
	recv *receiverClient
	seq  int // databases made so far, to name the next
}

// results is everything a run measured.
type results struct {
	targets    []string      // bare first (if measured), then the engines
	throughput []*throughput // every target's every round, in the order run
	latency    []*latency    // every engine's every latency round
	recvPeak   int64         // the receiver's peak RSS, bytes
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func (b *bench) close() {
	if b.recv != nil {
		b.recv.child.Stop(10 * time.Second)
	}
	if b.dir != "" {
		if b.c.keep {
			b.logf("kept work directory %s", b.dir)
		} else {
			os.RemoveAll(b.dir)
		}
	}
}

func (b *bench) run(ctx context.Context) (*results, error) {
	var err error
	if b.dir, err = os.MkdirTemp("", "notifybench-"); err != nil {
		return nil, err
	}
	if b.self, err = os.Executable(); err != nil {
		return nil, err
	}
	if len(b.c.engines) > 0 {
		if b.c.tocsin == "" {
			b.logf("building ./cmd/tocsin")
		}
		if b.bin, err = tocsin.Open(ctx, b.c.tocsin, b.dir); err != nil {
			return nil, err
		}
		if b.keys, err = b.bin.Run(ctx, "secret-key"); err != nil {
			return nil, err
		}
	}
	ch, err := child.Start(ctx, b.self, b.dir, "receiver", nil, "-receive")
	if err != nil {
		return nil, err
	}
	b.logf("receiver: listening at %s (pid %d)", ch.Base, ch.Pid())
	b.recv = newReceiverClient(ch)

	res := &results{}
	if b.c.bare {
		res.targets = append(res.targets, "bare")
	}
	res.targets = append(res.targets, b.c.engines...)
	for r := range b.c.rounds {
		for i := range res.targets {
			t := res.targets[(i+r)%len(res.targets)] // a rotating order
			var (
				tp  *throughput
				err error
			)
			if t == "bare" {
				tp, err = b.bareRound(ctx, r+1)
			} else {
				tp, err = b.tocsinRound(ctx, t, r+1)
			}
			if err != nil {
				return nil, fmt.Errorf("round %d, %s: %w", r+1, t, err)
			}
			res.throughput = append(res.throughput, tp)
			b.logf("round %d, %s: %d delivered in %s, %.0f/s", r+1, t, tp.recv.Unique, figure.Dur(tp.elapsed), tp.rate())
		}
	}
	if b.c.monitors > 0 {
		for _, e := range b.c.engines {
			for r := range b.c.latencyRounds {
				l, err := b.latencyRound(ctx, e, r+1)
				if err != nil {
					return nil, fmt.Errorf("latency, %s: %w", e, err)
				}
				res.latency = append(res.latency, l)
			}
		}
	}
	res.recvPeak = host.PeakRSS(b.recv.child.Pid())
	return res, nil
}

// serve starts `tocsin serve` on the database at dbURL, as an operator
// starts it: the keyring in the environment, the database on the command
// line, every other setting its default.
func (b *bench) serve(ctx context.Context, name, dbURL string) (*child.Process, error) {
	srv, err := b.bin.Serve(ctx, b.dir, name, []string{"TOCSIN_SECRET_KEYS=" + b.keys},
		"--data-dir", filepath.Join(b.dir, name), "--database-url", dbURL)
	if err != nil {
		return nil, err
	}
	b.logf("%s: tocsin serve at %s (pid %d)", name, srv.Base, srv.Pid())
	return srv, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
