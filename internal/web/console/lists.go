package console

import (
	"maps"
	"net/http"
	"slices"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/clean"
	"github.com/tocsin/tocsin/internal/errs"
)

// badLink is the message for a list's link whose cursor does not work.
const badLink = "This link to a page of the list does not work; here is the first page."

// linkedPage is the page of the workspace's list at path list (under
// /w/{ws}/) that the link's cursor names, read through read, and next,
// the link to the page after it ("" on the last). A cursor that is not
// valid text, or that read refuses as invalid, gives the first page and
// badLink as le's summary.
func linkedPage[T any](q *request, list string, le *FormErrors, read func(app.PageRequest) (app.Page[T], error)) (page app.Page[T], next string, err error) {
	cursor := q.r.URL.Query().Get("cursor")
	if !clean.Valid(cursor) {
		cursor, le.Summary = "", badLink
	}
	page, err = read(app.PageRequest{Cursor: cursor, Limit: listPageSize})
	if errs.KindOf(err) == errs.KindInvalid && cursor != "" {
		le.Summary = badLink
		page, err = read(app.PageRequest{Limit: listPageSize})
	}
	if err != nil {
		return page, "", err
	}
	if page.NextCursor != "" {
		next = nextPageURL("/w/"+q.actor.WorkspaceID+"/"+list, page.NextCursor, nil)
	}
	return page, next, nil
}

// filteredPage is the page of a filtered list that read reads, and the
// answer's status. read runs when the query's fields were all read well
// (fe is empty); a filter it refuses as invalid becomes fe's messages at
// the fields fieldOf names for the API's ("query.state": "state"). fe
// then keeps only the filter's fields' messages (see keepFilterFields),
// and any message left makes the status 422.
func filteredPage[T any](fe *FormErrors, fieldOf map[string]string, read func() (app.Page[T], error)) (app.Page[T], int, error) {
	var page app.Page[T]
	if !fe.Any() {
		var err error
		if page, err = read(); err != nil {
			if errs.KindOf(err) != errs.KindInvalid {
				return page, 0, err
			}
			*fe, _ = formErrors(err, fieldOf)
		}
	}
	keepFilterFields(fe, slices.Collect(maps.Values(fieldOf))...)
	if fe.Any() {
		return page, http.StatusUnprocessableEntity, nil
	}
	return page, http.StatusOK, nil
}
