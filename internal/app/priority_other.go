//go:build !linux

package app

// lowerPriority does nothing where a thread's priority cannot be set
// apart from its process's.
func lowerPriority() {}
