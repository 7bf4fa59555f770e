package metrics

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"syscall"
	"time"

	"github.com/tocsin/tocsin/bench/internal/host"
)

// The rollup job runs in this process, as it runs in `tocsin serve`
// (app.Rollup, round after round while a round finds buckets to write),
// so its CPU is this process's CPU time over the run (getrusage), plus,
// on PostgreSQL, the CPU time of PostgreSQL's processes that work for the
// database: what a check's CPU is charged with too.

// rollupRun is one run of the job until it had caught up.
type rollupRun struct {
	rounds, buckets int
	observations    int64 // raw observations in the hours it rolled up
	wall, cpu, pg   time.Duration
}

// perObservation is the job's CPU, PostgreSQL's included, per observation
// it rolled up.
func (r rollupRun) perObservation() time.Duration {
	if r.observations == 0 {
		return 0
	}
	return (r.cpu + r.pg) / time.Duration(r.observations)
}

func (s *seeder) rollUp(ctx context.Context, name string) (rollupRun, error) {
	var r rollupRun
	p0, err := s.db.RollupProgress(ctx)
	if err != nil {
		return r, err
	}
	s.b.Logf("%s: rolling up (%s) as the job does, until it has caught up", s.engine, name)
	if s.b.c.profile != "" {
		f, err := os.Create(fmt.Sprintf("%s.%s.%s.pprof", s.b.c.profile, s.engine, name))
		if err != nil {
			return r, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return r, err
		}
		defer pprof.StopCPUProfile()
	}
	sample := host.TakeSample()
	cpu := processCPU()
	begin := time.Now()
	for {
		n, err := s.app.Rollup(ctx, owner)
		if err != nil {
			return r, err
		}
		r.rounds++
		r.buckets += n
		if n == 0 {
			break
		}
	}
	r.wall = time.Since(begin)
	r.cpu = processCPU() - cpu
	if s.engine == "postgres" {
		pg, err := s.raw.pgProcesses(ctx)
		if err != nil {
			return r, err
		}
		var ticks uint64
		sample.Each(host.TakeSample(), func(pid int, own uint64) {
			if pg[pid] {
				ticks += own
			}
		})
		r.pg = time.Duration(ticks) * host.ClockTick
	}
	p1, err := s.db.RollupProgress(ctx)
	if err != nil {
		return r, err
	}
	// The observations of the hours it went through: the year monitor's
	// before its start (a job never run begins before the first row).
	from, to := p0[hourRollup], p1[hourRollup]
	if r.observations, err = s.raw.countObservations(ctx, from, to); err != nil {
		return r, err
	}
	s.b.Logf("%s: rolled up %d observations in %d rounds (%d buckets) in %s: CPU %s here + %s in PostgreSQL, %s per observation",
		s.engine, r.observations, r.rounds, r.buckets, r.wall.Round(time.Millisecond), r.cpu.Round(time.Millisecond),
		r.pg.Round(time.Millisecond), r.perObservation())
	return r, nil
}

// hourRollup is the name the store keeps the hourly rollup of
// observations' progress under.
const hourRollup = "observations/hour"

// processCPU is this process's CPU time so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
