// Package recur computes recurrences in a time zone: when a cron expression
// or an RFC 5545 RRULE next fires, when it last fired, and whether a
// maintenance window is open at an instant. It is pure: no clock, no I/O.
//
// # Occurrences are wall-clock times
//
// A rule names wall-clock times in its Location ("02:30 every day in
// Europe/Berlin"). Most wall times name exactly one instant. Twice a year a
// daylight-saving change breaks that, and these are the product's rules:
//
//   - Spring forward. A wall time that does not exist that night (02:30 in
//     Europe/Berlin on the last Sunday of March, 02:30 in America/New_York
//     on the second Sunday of March, 02:30 in Australia/Sydney on the first
//     Sunday of October) fires once, at the first instant after the gap:
//     03:00 local where clocks jump from 02:00 to 03:00. It is never skipped and never
//     fired twice; several wall times inside one gap (02:00, 02:15, 02:30…)
//     all become that one instant, which fires once. (RFC 5545 drops such
//     a recurrence instance, and Go's time.Date moves it to 03:30; we do
//     neither.)
//   - Fall back. A wall time that happens twice (01:30 in America/New_York
//     on the first Sunday of November, 02:30 in Europe/Berlin on the last
//     Sunday of October, 02:30 in Australia/Sydney on the first Sunday of
//     April) fires once, at its first occurrence (the one still on summer
//     time).
//   - Cron expressions whose minute or hour field starts with "*"
//     ("0 * * * *", "*/15 * * * *", "30 */2 * * *", "*/5 9 * * *") run often
//     enough that they are scheduled on real elapsed time instead, as Debian's cron
//     and healthchecks.io do: they fire at every instant whose local
//     reading matches, so across a fall-back night an hourly job fires at
//     01:00 summer time and again one real hour later at 01:00 standard
//     time, and across a spring-forward night it goes from 01:00 to 03:00
//     local, which is one real hour. No instant is ever produced twice and
//     consecutive occurrences are always strictly increasing. The price is
//     that such a job whose hour field is fixed and falls inside the gap
//     ("*/15 2 * * *") has no occurrence on the spring-forward night, just
//     as under Debian's cron — which is what a heartbeat monitoring that job
//     must expect.
//   - RRULEs are limited to FREQ=DAILY, WEEKLY, MONTHLY and YEARLY and always
//     follow the first two rules.
//
// These rules make the map from wall times to instants non-decreasing, so
// Next and Prev agree: Prev(Next(t)) == Next(t), and Next(Prev(t)) is
// after t.
//
// # Durations are elapsed time
//
// A maintenance window's Duration is real elapsed time, not wall time: a 2h
// window that starts at 01:00 on a fall-back night in America/New_York ends
// at 02:00 standard time, two real hours later though the clock reads only
// one hour later, and
// a 2h window that would start at 02:30 on a spring-forward night starts at
// 03:00 and ends at 05:00.
//
// # Cron expressions
//
// Five fields: minute, hour, day of month, month, day of week (0-7, 0 and 7
// are Sunday; names JAN-DEC and SUN-SAT work), with lists, ranges and steps,
// plus the extensions L (last day of the month; "5L" the month's last
// Friday), nW (the weekday nearest day n) and n#k (the k-th weekday n of the
// month). As in Vixie cron, when neither day field starts with "*" a day
// matching either one fires. The macros @yearly, @annually, @monthly,
// @weekly, @daily, @midnight and @hourly are accepted. Seconds, years and
// @reboot are not, nor is an expression that can never fire ("0 0 30 2 *").
// Cron arithmetic is done by github.com/adhocore/gronx on wall times; this
// package maps wall times to instants.
//
// # RRULEs
//
// RFC 5545 recurrence rules ("FREQ=WEEKLY;BYDAY=SA;BYHOUR=2;BYMINUTE=30",
// with or without an "RRULE:" prefix) are expanded by
// github.com/teambition/rrule-go from a DTSTART read as a wall time in the
// rule's Location. UNTIL written with "Z" is an instant; written without it,
// a wall time; a date alone includes that whole day. DTSTART is an
// occurrence only if it matches the rule (as in python-dateutil). To keep
// every evaluation bounded, a rule may not use BYSECOND, COUNT above
// MaxRRuleCount, INTERVAL above MaxRRuleInterval, or more than
// MaxTimesPerDay BYHOUR × BYMINUTE combinations, and a rule that never
// fires is rejected.
//
// # Bounded work
//
// Next and Prev never loop without bound: they walk at most a thousand
// zone periods (about five centuries of DST changes) and a bounded number
// of occurrences, and answer false rather than search further.
package recur
