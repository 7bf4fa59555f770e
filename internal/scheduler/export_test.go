package scheduler

import (
	"log/slog"

	"github.com/tocsin/tocsin/internal/store"
)

// WriteForTest stores batch the way the writer stores a batch it formed,
// while the engine runs (not closing), and returns when it is done.
func WriteForTest(st Store, owner string, log *slog.Logger, m *Metrics, batch []store.Completed) {
	newWriter(st, owner, log, m, 0).write(batch, false)
}
