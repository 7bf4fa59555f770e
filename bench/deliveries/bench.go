package deliveries

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/tocsin/tocsin/bench/internal/child"
	"github.com/tocsin/tocsin/bench/internal/figure"
	"github.com/tocsin/tocsin/bench/internal/host"
	"github.com/tocsin/tocsin/bench/internal/session"
)

// bench owns the work directory, the receiver and the databases of a run.
type bench struct {
	c   config
	log io.Writer
	*session.Session
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

func (b *bench) close() {
	if b.recv != nil {
		b.recv.child.Stop(10 * time.Second)
	}
	if b.Session != nil {
		b.Session.Close()
	}
}

func (b *bench) run(ctx context.Context) (*results, error) {
	var err error
	b.Session, err = session.Open(ctx, session.Options{Name: "deliveries", Log: b.log, Tocsin: b.c.tocsin,
		NoTocsin: len(b.c.engines) == 0, Keep: b.c.keep})
	if err != nil {
		return nil, err
	}
	if len(b.c.engines) > 0 {
		if b.keys, err = b.Bin.Run(ctx, "secret-key"); err != nil {
			return nil, err
		}
	}
	ch, err := child.Start(ctx, b.Self, b.Dir, "receiver", nil, b.Area, "-receive")
	if err != nil {
		return nil, err
	}
	b.Logf("receiver: listening at %s (pid %d)", ch.Base, ch.Pid())
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
			b.Logf("round %d, %s: %d delivered in %s, %.0f/s", r+1, t, tp.recv.Unique, figure.Dur(tp.elapsed), tp.rate())
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
	srv, err := b.Bin.Serve(ctx, b.Dir, name, []string{"TOCSIN_SECRET_KEYS=" + b.keys},
		"--data-dir", filepath.Join(b.Dir, name), "--database-url", dbURL)
	if err != nil {
		return nil, err
	}
	b.Logf("%s: tocsin serve at %s (pid %d)", name, srv.Base, srv.Pid())
	return srv, nil
}
