package app

import (
	"encoding/base64"
	"encoding/json"
	"unicode/utf8"

	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
)

// Page is one page of a list.
type Page[T any] struct {
	Items      []T
	NextCursor string // "" on the last page
	Total      int
	HasTotal   bool
}

// PageRequest asks for one page; Cursor is opaque to clients.
type PageRequest struct {
	Cursor string
	Limit  int
}

// cursor is the decoded form of an opaque cursor: the sort key of the last
// item seen. Ids sort by creation, so keyset pages stay stable while rows
// are inserted.
type cursor struct {
	V     int    `json:"v"`
	After string `json:"a"`
}

const (
	DefaultPageLimit = 50
	MaxPageLimit     = 100
)

func encodeCursor(after string) string {
	b, _ := json.Marshal(cursor{V: 1, After: after})
	return base64.RawURLEncoding.EncodeToString(b)
}

func (p PageRequest) decode() (after string, limit int, err error) {
	limit = p.Limit
	if limit == 0 {
		limit = DefaultPageLimit
	}
	if limit < 1 || limit > MaxPageLimit {
		return "", 0, &errs.Error{Kind: errs.KindInvalid, Message: "limit must be between 1 and 100",
			Fields: []errs.FieldError{{Pointer: "query.limit", Message: "must be between 1 and 100"}}}
	}
	if p.Cursor == "" {
		return "", limit, nil
	}
	bad := badCursor()
	b, err := base64.RawURLEncoding.DecodeString(p.Cursor)
	if err != nil {
		return "", 0, bad
	}
	var c cursor
	// A cursor is the client's text: one that decodes to bytes no sort key
	// holds (NUL, invalid UTF-8, which json would turn into U+FFFD) would
	// reach the database.
	if !utf8.Valid(b) || json.Unmarshal(b, &c) != nil || c.V != 1 || c.After == "" || !clean.Valid(c.After) {
		return "", 0, bad
	}
	return c.After, limit, nil
}

func badCursor() error {
	return &errs.Error{Kind: errs.KindInvalid, Message: "cursor is not a value returned as nextCursor",
		Fields: []errs.FieldError{{Pointer: "query.cursor", Message: "is not a value returned as nextCursor"}}}
}
