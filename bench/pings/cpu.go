package pings

import (
	"github.com/tocsin/tocsin/bench/internal/host"
)

// On a small machine the load generator, the server and PostgreSQL share
// the CPUs. cpuSample reads Linux's counters at both ends of a window to
// say who used them, and how much CPU time a ping cost the server and
// PostgreSQL.

type cpuSample = host.Sample

// cpuShare is a window's CPU use: percentages of the whole machine (100%
// = all CPUs), and the server's and PostgreSQL's CPU time. IRQ is time in
// interrupts, which Linux charges to no process: at tens of thousands of
// requests a second over loopback, the network's softirqs are a large
// part of the machine.
type cpuShare = host.Share

func sampleCPU() cpuSample { return host.TakeSample() }

// share is host.Split: the window's CPU by process.
func share(a, b host.Sample, serverPID int, pg map[int]bool) cpuShare {
	return host.Split(a, b, serverPID, pg)
}
