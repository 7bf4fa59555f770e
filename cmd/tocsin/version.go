package main

import (
	"fmt"
	"io"
	"runtime/debug"
)

// version prints the module version ("devel" for a build from a work
// tree) and the commit it was built from, as the Go toolchain stamped them.
func version(stdout io.Writer) error {
	fmt.Fprintln(stdout, versionLine())
	return nil
}

func versionLine() string {
	v, commit, modified := "devel", "unknown", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		if mv := bi.Main.Version; mv != "" && mv != "(devel)" {
			v = mv
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if modified {
		commit += " (modified)"
	}
	return fmt.Sprintf("tocsin %s commit %s", v, commit)
}
