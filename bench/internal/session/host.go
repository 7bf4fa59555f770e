// Reads what the benchmark commands report about the machine
// they ran on: Linux's CPU counters, machine-wide and per process, and a
// description of the hardware and kernel. Linux only; elsewhere every
// reading is empty.

package session

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ClockTick is Linux's USER_HZ, the unit of /proc's CPU times; it is 100 on
// every architecture Go supports.
const ClockTick = 10 * time.Millisecond

// CPU is the machine's cumulative CPU time in clock ticks, from /proc/stat.
type CPU struct {
	// Busy counts user, nice, system, irq and softirq; Steal is time the
	// hypervisor gave this VM's CPUs to someone else.
	Busy, Idle, Steal uint64
}

// All is every tick of every CPU.
func (c CPU) All() uint64 { return c.Busy + c.Idle + c.Steal }

// ReadCPU reads the machine's counters; false when they cannot be read.
func ReadCPU() (CPU, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPU{}, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return CPU{}, false
	}
	var v [8]uint64
	for i := range v {
		v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
	}
	// user nice system idle iowait irq softirq steal
	return CPU{Busy: v[0] + v[1] + v[2] + v[5] + v[6], Idle: v[3] + v[4], Steal: v[7]}, true
}

// Proc is one process's cumulative CPU time in clock ticks.
type Proc struct {
	Own, Children uint64 // user+system time of the process, and of its reaped children
	Start         uint64 // start time, telling a reused pid from the same process
	Comm          string
}

// Procs reads every process's counters, by pid.
func Procs() map[int]Proc {
	out := map[int]Proc{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		if err != nil {
			continue
		}
		if t, ok := ReadProc(p); ok {
			out[pid] = t
		}
	}
	return out
}

// ReadProc reads one /proc/<pid>/stat.
func ReadProc(path string) (Proc, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Proc{}, false
	}
	open, end := strings.IndexByte(string(b), '('), strings.LastIndexByte(string(b), ')')
	if open < 0 || end < open {
		return Proc{}, false
	}
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 {
		return Proc{}, false
	}
	// After the command: state(0) … utime(11) stime(12) cutime(13) cstime(14) … starttime(19).
	var n [4]uint64
	for i := range n {
		n[i], _ = strconv.ParseUint(f[11+i], 10, 64)
	}
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return Proc{Own: n[0] + n[1], Children: n[2] + n[3], Start: start, Comm: string(b[open+1 : end])}, true
}

// Delta is y − x for counters, 0 when the counter went back.
func Delta(x, y uint64) uint64 {
	if y < x {
		return 0
	}
	return y - x
}

// Machine describes the hardware and software a run measured. Describe
// fills all but the last two, which the benchmark knows.
type Machine struct {
	Date, CPUs, CPUModel, Memory, GoVersion, Kernel string
	Postgres                                        string // the PostgreSQL server's version, when a run used one
	Tocsin                                          string // the binary measured and its commit
}

// Describe reads the machine's description now.
func Describe() Machine {
	m := Machine{
		Date:      time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		CPUs:      fmt.Sprintf("%d (GOMAXPROCS %d)", runtime.NumCPU(), runtime.GOMAXPROCS(0)),
		CPUModel:  "unknown",
		GoVersion: runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH,
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			var kb int64
			if _, err := fmt.Sscanf(line, "MemTotal: %d kB", &kb); err == nil {
				m.Memory = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// PeakRSS is a process's peak resident set (VmHWM) in bytes; 0 if unknown.
func PeakRSS(pid int) int64 {
	peak, _ := Memory(pid)
	return peak
}

// Memory is a process's peak resident set (VmHWM) and its resident set now
// (VmRSS), in bytes; 0 if unknown.
func Memory(pid int) (peak, resident int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for line := range strings.Lines(string(b)) {
		var kb int64
		if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kb); err == nil {
			peak = kb << 10
		}
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &kb); err == nil {
			resident = kb << 10
		}
	}
	return peak, resident
}

// String is the machine on one line, as the reports print it.
func (m Machine) String() string {
	s := fmt.Sprintf("%s; tocsin %s; %s CPUs, %s; %s RAM; %s; Linux %s",
		m.Date, orUnknown(m.Tocsin), m.CPUs, m.CPUModel, orUnknown(m.Memory), m.GoVersion, m.Kernel)
	if m.Postgres != "" {
		s += "; PostgreSQL " + m.Postgres
	}
	return s
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
