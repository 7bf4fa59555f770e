package store

import (
	"fmt"
	"strings"
)

// where builds the conditions of a filtered list, numbering its
// arguments in the order they are added.
type where struct {
	conds []string
	args  []any
}

// whereOf starts with the workspace every list is scoped to.
func whereOf(wsID, column string) *where {
	w := &where{}
	w.add(column + " = " + w.arg(wsID))
	return w
}

// arg adds v and returns its placeholder.
func (w *where) arg(v any) string {
	w.args = append(w.args, v)
	return fmt.Sprintf("$%d", len(w.args))
}

func (w *where) add(cond string) { w.conds = append(w.conds, cond) }

// inList adds "column IN (…)" when vs is not empty.
func inList[T ~string](w *where, column string, vs []T) {
	if len(vs) == 0 {
		return
	}
	ph := make([]string, len(vs))
	for i, v := range vs {
		ph[i] = w.arg(string(v))
	}
	w.add(column + " IN (" + strings.Join(ph, ", ") + ")")
}

func (w *where) sql() string { return strings.Join(w.conds, " AND ") }
