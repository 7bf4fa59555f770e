package scheduler

import (
	"log/slog"

	"github.com/tocsin/tocsin/internal/monitor"
)

// WriteForTest stores batch the way the writer stores a batch it formed,
// while the engine runs (not closing), and returns when it is done.
func WriteForTest(app App, owner string, log *slog.Logger, m *Metrics, batch []monitor.Completed) {
	newWriter(app, owner, log, m, 0).write(batch, false)
}
