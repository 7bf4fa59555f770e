// Package heartbeat is the domain core of heartbeats: a cron job or worker
// calls a secret URL (a ping) and Tocsin raises the alarm when a run is
// late, fails or overruns. It is pure: no clock, no I/O.
//
// # Schedules and deadlines
//
// A heartbeat runs either every PeriodSeconds or on a five-field cron
// expression in an IANA time zone, and has a grace time. After any instant
// (typically the last ping, or when the heartbeat was created or resumed)
// Plan.Next says when the next run is expected and its deadline: the
// heartbeat is late when no ping has arrived by then.
//
//   - Period: the run is expected one period after the instant, and the
//     deadline is that plus grace. A period is elapsed time: a daily
//     heartbeat pinged at noon the day before clocks spring forward expects
//     its next ping at 13:00 local.
//   - Cron: the run is expected at the first occurrence strictly after the
//     instant, as package recur computes it, and the deadline is the latest
//     instant a real cron daemon could run that occurrence, plus grace.
//     Outside daylight-saving nights that is the occurrence itself.
//
// # Daylight-saving allowance
//
// Cron daemons disagree about wall times that a daylight-saving change
// repeats or skips, so a deadline covers every reading and no
// daylight-saving night raises a false alarm:
//
//   - Fall back. A wall time that happens twice (02:30 on the night
//     Europe/Berlin goes from summer to winter time, 01:30 in
//     America/New_York) is expected at its first occurrence, but a daemon may
//     run it at the second one, an hour later (thirty minutes later in
//     Australia/Lord_Howe). The deadline counts from the second occurrence.
//   - Spring forward. A wall time inside the gap (02:30 in Europe/Berlin on
//     the last Sunday of March) is expected at the first instant after the
//     gap, 03:00 summer time. Some daemons run it then, others at the wall
//     time read with the old offset (03:30 summer time). The expected instant
//     no longer tells which wall time in the gap was meant, so the deadline
//     counts from the end of the whole skipped stretch read with the old
//     offset: 04:00 summer time, plus grace.
//
// The price of the spring allowance: a job really scheduled at the end of
// the gap (03:00 in Berlin on that night, or an hourly job) gets the same
// extra time, so if it fails to run the alert comes up to one hour late
// (thirty minutes on Lord Howe Island), once a year. It is never early.
//
// # Pings and tokens
//
// A ping's URL carries a secret token, optionally followed by a suffix:
// "start", "fail" or a process exit code (see ParsePingSuffix). NewToken
// makes a token from 256 random bits from crypto/rand, encoded with
// base64.RawURLEncoding (43 characters of A-Z, a-z, 0-9, '-' and '_').
// Only its SHA-256 (HashToken) is stored, and pings are looked up by it.
package heartbeat
