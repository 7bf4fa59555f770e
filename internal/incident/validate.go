package incident

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
)

// Limits on what a person writes into an incident. The API's schema takes
// its numbers from here, so the document and the rule are one.
const (
	MaxTitleLen   = 200  // characters
	MaxMessageLen = 5000 // characters of one update
	MaxAffected   = 100  // monitors and heartbeats an incident lists as affected
)

// ValidateTitle checks an incident's title.
func ValidateTitle(title string) []errs.FieldError {
	switch {
	case strings.TrimSpace(title) == "":
		return []errs.FieldError{{Pointer: "/title", Message: "must not be blank"}}
	case utf8.RuneCountInString(title) > MaxTitleLen:
		return []errs.FieldError{{Pointer: "/title", Message: fmt.Sprintf("must be at most %d characters", MaxTitleLen)}}
	}
	return nil
}

// ValidatePublicTitle checks the title readers of a status page see; empty
// means none.
func ValidatePublicTitle(title string) []errs.FieldError {
	switch {
	case title == "":
	case strings.TrimSpace(title) == "":
		return []errs.FieldError{{Pointer: "/publicTitle", Message: "must not be blank (give none to clear it)"}}
	case utf8.RuneCountInString(title) > MaxTitleLen:
		return []errs.FieldError{{Pointer: "/publicTitle", Message: fmt.Sprintf("must be at most %d characters", MaxTitleLen)}}
	}
	return nil
}

// ValidatePublic checks that a public incident names where it shows: a
// status page shows an incident by the monitors and heartbeats it touches
// (Incident.Touches), so one that touches none would show nowhere.
func ValidatePublic(inc *Incident) []errs.FieldError {
	if inc.Public && len(inc.Touches()) == 0 {
		return []errs.FieldError{{Pointer: "/public",
			Message: "a public incident needs at least one affected monitor or heartbeat: status pages show it by them"}}
	}
	return nil
}

// ValidateMessage checks an update's message, named by ptr.
func ValidateMessage(ptr, msg string) []errs.FieldError {
	switch {
	case strings.TrimSpace(msg) == "":
		return []errs.FieldError{{Pointer: ptr, Message: "must not be blank"}}
	case utf8.RuneCountInString(msg) > MaxMessageLen:
		return []errs.FieldError{{Pointer: ptr, Message: fmt.Sprintf("must be at most %d characters", MaxMessageLen)}}
	}
	return nil
}

// ValidateAffected checks the list of affected monitors and heartbeats:
// bounded, ids of the right kinds, none twice. Whether they are the
// workspace's is for the store to say.
func ValidateAffected(affected []string) []errs.FieldError {
	var problems []errs.FieldError
	if len(affected) > MaxAffected {
		problems = append(problems, errs.FieldError{Pointer: "/affectedMonitors", Message: fmt.Sprintf("must list at most %d", MaxAffected)})
	}
	seen := map[string]bool{}
	for i, id := range affected {
		ptr := fmt.Sprintf("/affectedMonitors/%d", i)
		switch {
		case !strings.HasPrefix(id, ids.Monitor+"_") && !strings.HasPrefix(id, ids.Heartbeat+"_"):
			problems = append(problems, errs.FieldError{Pointer: ptr, Message: "must be a monitor (mon_…) or heartbeat (hb_…) id"})
		case seen[id]:
			problems = append(problems, errs.FieldError{Pointer: ptr, Message: "is listed twice"})
		}
		seen[id] = true
	}
	return problems
}
