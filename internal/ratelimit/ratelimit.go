// Package ratelimit holds rate-limit buckets in this process's memory:
// GCRA, where a bucket is one number, its theoretical arrival time (TAT).
// Taking a token moves it to max(TAT, now) + emission; the request is
// allowed when that lands at most tolerance after now, so a bucket allows
// a burst of tolerance/emission requests, refilled at one per emission. A
// TAT in the past means a full bucket, so a missing bucket and a stale one
// behave the same, and forgetting stale buckets loses nothing.
//
// It serves limits that hold per node and must cost no database round trip
// (the ping URLs'), and every limit of a single-node SQLite server. Limits
// several nodes share live in the database.
package ratelimit

import (
	"hash/maphash"
	"sync"
	"time"
)

// Memory is a set of buckets, sharded so concurrent requests for
// different buckets rarely share a lock. It is safe for concurrent use.
type Memory struct {
	seed   maphash.Seed
	shards [32]shard
}

type shard struct {
	mu  sync.Mutex
	tat map[string]int64 // unix µs
	// sweepAt is the size at which the shard next drops full buckets; it
	// doubles with the live size so sweeping costs O(1) per take on average.
	sweepAt int
}

const minSweep = 1024

// New returns an empty set of buckets.
func New() *Memory {
	m := &Memory{seed: maphash.MakeSeed()}
	for i := range m.shards {
		m.shards[i].tat = make(map[string]int64)
		m.shards[i].sweepAt = minSweep
	}
	return m
}

func (m *Memory) shard(bucket string) *shard {
	return &m.shards[maphash.String(m.seed, bucket)%uint64(len(m.shards))]
}

// TakeMicros takes one token from bucket at now (unix µs), with emission
// and tolerance in µs. When allowed it returns true and the new TAT; when
// refused, false and the current TAT, and nothing changes.
func (m *Memory) TakeMicros(bucket string, now, emission, tolerance int64) (bool, int64) {
	s := m.shard(bucket)
	s.mu.Lock()
	defer s.mu.Unlock()
	tat, ok := s.tat[bucket]
	if !ok {
		tat = now
	}
	next := max(tat, now) + emission
	if next-now > tolerance {
		return false, tat
	}
	s.tat[bucket] = next
	if len(s.tat) >= s.sweepAt {
		s.sweep(now)
	}
	return true, next
}

// GiveMicros gives back one token taken from bucket with this emission
// (µs), as if it had never been taken: an attempt that turned out not to
// count. A bucket forgotten meanwhile was full, and stays so.
func (m *Memory) GiveMicros(bucket string, emission int64) {
	s := m.shard(bucket)
	s.mu.Lock()
	defer s.mu.Unlock()
	if tat, ok := s.tat[bucket]; ok {
		s.tat[bucket] = tat - emission
	}
}

func (s *shard) sweep(now int64) (n int64) {
	for b, tat := range s.tat {
		if tat < now {
			delete(s.tat, b)
			n++
		}
	}
	s.sweepAt = max(minSweep, 2*len(s.tat))
	return n
}

// Purge forgets the buckets that are full again at now (unix µs) and
// returns how many.
func (m *Memory) Purge(now int64) (n int64) {
	for i := range m.shards {
		s := &m.shards[i]
		s.mu.Lock()
		n += s.sweep(now)
		s.mu.Unlock()
	}
	return n
}

// budget turns perMinute in bursts of burst into the emission interval
// and tolerance, in µs.
func budget(perMinute, burst int) (em, tol int64) {
	em = time.Minute.Microseconds() / int64(max(perMinute, 1))
	return em, em * int64(max(burst, 1))
}

// Status is a bucket's state as one request sees it.
type Status struct {
	OK    bool          // the request is (or would be) allowed
	Left  int           // requests the bucket would still allow at once
	Reset time.Duration // until the bucket is full again
	Retry time.Duration // until one more request would be allowed (0: now)
}

// status is the Status of a bucket whose TAT is tat at now, after an
// allowed request (ok) or a refused one.
func status(ok bool, tat, now, em, tol int64) Status {
	ahead := max(tat-now, 0)
	st := Status{OK: ok, Reset: time.Duration(ahead) * time.Microsecond}
	if wait := ahead + em - tol; wait > 0 {
		st.Retry = time.Duration(wait) * time.Microsecond
	} else {
		st.Left = int((tol - ahead) / em)
	}
	if !ok {
		st.Left = 0
	}
	return st
}

// Take spends one request from bucket, which allows perMinute a minute in
// bursts of up to burst, and reports the bucket as the request left it.
func (m *Memory) Take(bucket string, now time.Time, perMinute, burst int) Status {
	em, tol := budget(perMinute, burst)
	us := now.UnixMicro()
	ok, tat := m.TakeMicros(bucket, us, em, tol)
	return status(ok, tat, us, em, tol)
}

// Peek reports, without spending, what Take would answer now: OK and
// Retry say whether a request would be allowed, Left how many would be.
func (m *Memory) Peek(bucket string, now time.Time, perMinute, burst int) Status {
	em, tol := budget(perMinute, burst)
	us := now.UnixMicro()
	s := m.shard(bucket)
	s.mu.Lock()
	tat, ok := s.tat[bucket]
	s.mu.Unlock()
	if !ok {
		tat = us
	}
	st := status(true, tat, us, em, tol)
	st.OK = st.Retry == 0
	return st
}
