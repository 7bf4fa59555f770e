package app

import "syscall"

// heavyNice is the niceness of a thread running a heavy metrics query:
// against threads at the default 0, Linux gives it about a tenth of
// their share of the CPU when they want it, and all of it when they
// do not.
const heavyNice = 10

// lowerPriority lowers the calling thread's CPU priority (on Linux,
// setpriority on a thread id applies to that thread alone). Failing
// leaves it as it was.
func lowerPriority() {
	_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), heavyNice)
}
