// Linux's counters of who used the machine's CPUs and memory, and a
// description of the hardware and kernel. Linux only; elsewhere every
// reading is empty.

package session

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTick is Linux's USER_HZ, the unit of /proc's CPU times; it is 100
// on every architecture Go supports.
const clockTick = 10 * time.Millisecond

// Sample is the machine's CPU counters and every process's CPU time at
// one moment, in clock ticks; two of them say who used the CPUs between.
type Sample struct {
	All, Busy, Steal, IRQ uint64            // all CPUs; Busy counts neither idle nor steal, IRQ is of Busy
	procs                 map[int][2]uint64 // by pid: own user+system time, start time
}

// TakeSample reads the counters now.
func TakeSample() Sample {
	s := Sample{procs: map[int][2]uint64{}}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		if f := strings.Fields(line); len(f) >= 9 && f[0] == "cpu" {
			var v [8]uint64 // user nice system idle iowait irq softirq steal
			for i := range v {
				v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
			}
			s.Busy, s.IRQ, s.Steal = v[0]+v[1]+v[2]+v[5]+v[6], v[5]+v[6], v[7]
			s.All = s.Busy + v[3] + v[4] + s.Steal
		}
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		b, rerr := os.ReadFile(p)
		end := strings.LastIndexByte(string(b), ')')
		if err != nil || rerr != nil || end < 0 {
			continue
		}
		// After the command: state(0) … utime(11) stime(12) … starttime(19).
		if f := strings.Fields(string(b[end+1:])); len(f) >= 20 {
			u, _ := strconv.ParseUint(f[11], 10, 64)
			st, _ := strconv.ParseUint(f[12], 10, 64)
			start, _ := strconv.ParseUint(f[19], 10, 64)
			s.procs[pid] = [2]uint64{u + st, start}
		}
	}
	return s
}

// Share is a window's CPU time split between the server, its PostgreSQL
// processes, the benchmark process (the load), interrupts and everything
// else, in percent of all CPUs (100% = every CPU busy), with the server's,
// PostgreSQL's and the benchmark's time.
type Share struct {
	Busy, Server, Postgres, Self, IRQ, Other, Steal float64 // %
	ServerTime, PostgresTime, SelfTime              time.Duration
}

// Split attributes the CPU time between a and b to the process serverPID,
// the PostgreSQL processes in pg, this process, interrupts, and the rest.
// Linux charges interrupt time to whichever process was running, so the
// parts are close to, not exactly, what each caused.
func Split(a, b Sample, serverPID int, pg map[int]bool) Share {
	ticks := float64(b.All - a.All)
	if ticks <= 0 {
		return Share{}
	}
	pct := func(x uint64) float64 { return 100 * float64(x) / ticks }
	var server, self, pgTime uint64
	for pid, t := range b.procs {
		before := a.procs[pid]
		if before[1] != t[1] || before[0] > t[0] { // a process started meanwhile counts from zero
			before = [2]uint64{}
		}
		switch own := t[0] - before[0]; {
		case pid == serverPID:
			server += own
		case pid == os.Getpid():
			self += own
		case pg[pid]:
			pgTime += own
		}
	}
	s := Share{Busy: pct(b.Busy - a.Busy), Steal: pct(b.Steal - a.Steal), IRQ: pct(b.IRQ - a.IRQ),
		Server: pct(server), Postgres: pct(pgTime), Self: pct(self)}
	s.Other = max(s.Busy-s.Server-s.Postgres-s.Self-s.IRQ, 0)
	s.ServerTime, s.PostgresTime, s.SelfTime = time.Duration(server)*clockTick, time.Duration(pgTime)*clockTick, time.Duration(self)*clockTick
	return s
}

// Machine describes the machine, the binary measured and, when the run
// used one, the PostgreSQL server, on one line.
func (s *Session) Machine(ctx context.Context) string {
	model, mem, kernel := "unknown", "", ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	if kb := status("/proc/meminfo", "MemTotal:"); kb > 0 {
		mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<30))
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	m := fmt.Sprintf("%s; tocsin %s; %d (GOMAXPROCS %d) CPUs, %s; %s RAM; %s %s/%s; Linux %s", time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		s.Bin.Rev, runtime.NumCPU(), runtime.GOMAXPROCS(0), model, mem, runtime.Version(), runtime.GOOS, runtime.GOARCH, kernel)
	if slices.Contains(s.Engines, "postgres") {
		var v string
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if s.pg(ctx, s.PGURL, func(db *sql.DB) error { return db.QueryRowContext(ctx, "SHOW server_version").Scan(&v) }) == nil {
			m += "; PostgreSQL " + v
		}
	}
	return m
}

// PeakRSS is a process's peak resident set (VmHWM) in bytes; 0 if unknown.
func PeakRSS(pid int) int64 { return status(fmt.Sprintf("/proc/%d/status", pid), "VmHWM:") }

// status reads a "Name: N kB" line of a /proc file, in bytes.
func status(path, name string) int64 {
	b, _ := os.ReadFile(path)
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, name); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
