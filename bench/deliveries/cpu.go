package deliveries

import (
	"time"

	"github.com/tocsin/tocsin/bench/internal/host"
)

// The sender (tocsin serve, or this process as the bare sender), the
// receiver and PostgreSQL share the machine's CPUs. cpuSample reads Linux's counters
// at both ends of a window to say who used them, and how much CPU time a
// delivery cost each.

type cpuSample = host.Sample

// cpuShare is a window's CPU use: percentages of the whole machine (100%
// = all CPUs), and the CPU time of the sender, the receiver and
// PostgreSQL.
type cpuShare struct {
	Busy, Sender, Receiver, Postgres, IRQ, Other, Steal float64 // %
	SenderTime, ReceiverTime, PostgresTime              time.Duration
}

func sampleCPU() cpuSample { return host.TakeSample() }

// share attributes the CPU time between a and b to the sender, the
// receiver, the PostgreSQL processes in pg, interrupts, and everything
// else (this process, when it is not the sender, among it).
func share(a, b cpuSample, senderPID, receiverPID int, pg map[int]bool) cpuShare {
	ticks, busy, steal, irq := a.Window(b)
	if ticks == 0 {
		return cpuShare{}
	}
	s := cpuShare{Busy: busy, Steal: steal, IRQ: irq}
	var sender, recv, pgTime uint64
	a.Each(b, func(pid int, own uint64) {
		switch {
		case pid == senderPID:
			sender += own
		case pid == receiverPID:
			recv += own
		case pg[pid]:
			pgTime += own
		}
	})
	pct := func(x uint64) float64 { return 100 * float64(x) / ticks }
	s.Sender, s.Receiver, s.Postgres = pct(sender), pct(recv), pct(pgTime)
	s.Other = max(s.Busy-s.Sender-s.Receiver-s.Postgres-s.IRQ, 0)
	s.SenderTime = time.Duration(sender) * host.ClockTick
	s.ReceiverTime = time.Duration(recv) * host.ClockTick
	s.PostgresTime = time.Duration(pgTime) * host.ClockTick
	return s
}
