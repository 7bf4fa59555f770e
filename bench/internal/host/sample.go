package host

import (
	"os"
	"strconv"
	"strings"
)

// Sample is the machine's CPU counters and every process's CPU time at
// one moment; two of them say who used the CPUs in between.
type Sample struct {
	All, Busy, Steal uint64 // all CPUs; Busy counts neither idle nor steal
	IRQ              uint64 // of Busy, serving interrupts (irq and softirq)
	Procs            map[int]Proc
}

// TakeSample reads the counters now.
func TakeSample() Sample {
	c, _ := ReadCPU()
	return Sample{All: c.All(), Busy: c.Busy, Steal: c.Steal, IRQ: readIRQ(), Procs: Procs()}
}

// Window is the time from a to b: its length in clock ticks (0 when the
// counters did not move) and the shares of the whole machine, in percent
// (100% = all CPUs), that were busy, stolen and in interrupts.
func (a Sample) Window(b Sample) (ticks float64, busy, steal, irq float64) {
	ticks = float64(b.All - a.All)
	if ticks <= 0 {
		return 0, 0, 0, 0
	}
	pct := func(x uint64) float64 { return 100 * float64(x) / ticks }
	return ticks, pct(Delta(a.Busy, b.Busy)), pct(Delta(a.Steal, b.Steal)), pct(Delta(a.IRQ, b.IRQ))
}

// Each calls f with every process's own CPU ticks from a to b (a process
// started meanwhile counts from zero).
func (a Sample) Each(b Sample, f func(pid int, ticks uint64)) {
	for pid, t := range b.Procs {
		before := a.Procs[pid]
		if before.Start != t.Start {
			before = Proc{}
		}
		f(pid, Delta(before.Own, t.Own))
	}
}

// readIRQ is the machine's irq and softirq time from /proc/stat, in clock
// ticks; 0 when it cannot be read.
func readIRQ() uint64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0
	}
	irq, _ := strconv.ParseUint(f[6], 10, 64)
	soft, _ := strconv.ParseUint(f[7], 10, 64)
	return irq + soft
}
