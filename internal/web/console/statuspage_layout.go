package console

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/ids"
	"github.com/tocsin/tocsin/internal/statuspage"
)

// findComponent is where component id is in cur, and so in the draft
// made of it.
func findComponent(cur statuspage.Config, id string) (gi, ci int, err error) {
	for gi, g := range cur.Groups {
		for ci, c := range g.Components {
			if c.ID == id {
				return gi, ci, nil
			}
		}
	}
	return 0, 0, errs.ErrNotFound
}

func (w *Server) addComponent(q *request) error {
	var name, subject string
	group := -1
	return w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		var fe FormErrors
		name, subject = formText(q, &fe, "c-name", "c-name"), formText(q, &fe, "subject", "c-subject")
		c := app.StatusPageComponentDraft{Name: name}
		kind, sid, _ := strings.Cut(subject, ":")
		switch {
		case kind == "monitor" && ids.Valid(ids.Monitor, sid):
			c.MonitorID = sid
		case kind == "heartbeat" && ids.Valid(ids.Heartbeat, sid):
			c.HeartbeatID = sid
		default:
			if fe.Fields == nil {
				fe.Fields = map[string]string{}
			}
			fe.Fields["c-subject"] = "Choose a monitor or a heartbeat of this workspace."
		}
		if len(d.Groups) == 0 {
			d.Groups = append(d.Groups, app.StatusPageGroupDraft{})
		}
		group = len(d.Groups) - 1
		if g := q.r.PostForm.Get("group"); g != "" {
			n, err := strconv.Atoi(g)
			if err != nil || n < 0 || n >= len(d.Groups) {
				if fe.Fields == nil {
					fe.Fields = map[string]string{}
				}
				fe.Fields["c-subject"] = "Choose one of the page's groups."
			} else {
				group = n
			}
		}
		if fe.Any() {
			return refused(fe)
		}
		d.Groups[group].Components = append(d.Groups[group].Components, c)
		return nil
	}, func(v *StatusPageEditor, fe FormErrors) {
		v.AddName, v.AddSubject, v.AddErrors = name, subject, fe
		if group >= 0 && group < len(v.Groups) {
			v.AddGroup = group
		}
	})
}

func (w *Server) addGroup(q *request) error {
	var name string
	return w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		var fe FormErrors
		if name = formText(q, &fe, "g-name", "g-name"); fe.Any() {
			return refused(fe)
		}
		d.Groups = append(d.Groups, app.StatusPageGroupDraft{Name: name})
		return nil
	}, func(v *StatusPageEditor, fe FormErrors) {
		v.GroupName, v.GroupErrors = name, fe
	})
}

// direction is the form's "dir": -1 up, 1 down.
func direction(q *request) (int, error) {
	switch q.r.PostForm.Get("dir") {
	case "up":
		return -1, nil
	case "down":
		return 1, nil
	}
	return 0, &errs.Error{Kind: errs.KindInvalid, Message: "Choose to move up or down."}
}

// moveComponent moves a component one place up or down; at its group's
// edge it goes into the next group that way.
func (w *Server) moveComponent(q *request) error {
	id := q.r.PathValue("component")
	return w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		dir, err := direction(q)
		if err != nil {
			return err
		}
		gi, ci, err := findComponent(cur, id)
		if err != nil {
			return err
		}
		comps := d.Groups[gi].Components
		switch to := ci + dir; {
		case to >= 0 && to < len(comps):
			comps[ci], comps[to] = comps[to], comps[ci]
		case gi+dir >= 0 && gi+dir < len(d.Groups):
			c := comps[ci]
			d.Groups[gi].Components = slices.Delete(comps, ci, ci+1)
			next := &d.Groups[gi+dir]
			if dir < 0 {
				next.Components = append(next.Components, c)
			} else {
				next.Components = slices.Insert(next.Components, 0, c)
			}
		}
		return nil
	}, settingsErrors)
}

func (w *Server) removeComponent(q *request) error {
	id := q.r.PathValue("component")
	return w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		gi, ci, err := findComponent(cur, id)
		if err != nil {
			return err
		}
		d.Groups[gi].Components = slices.Delete(d.Groups[gi].Components, ci, ci+1)
		return nil
	}, settingsErrors)
}

// groupIndex is the path's group, a place in d.
func groupIndex(q *request, d *app.StatusPageDraft) (int, error) {
	n, err := strconv.Atoi(q.r.PathValue("group"))
	if err != nil || n < 0 || n >= len(d.Groups) {
		return 0, errs.ErrNotFound
	}
	return n, nil
}

func (w *Server) moveGroup(q *request) error {
	return w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		dir, err := direction(q)
		if err != nil {
			return err
		}
		gi, err := groupIndex(q, d)
		if err != nil {
			return err
		}
		if to := gi + dir; to >= 0 && to < len(d.Groups) {
			d.Groups[gi], d.Groups[to] = d.Groups[to], d.Groups[gi]
		}
		return nil
	}, settingsErrors)
}

func (w *Server) removeGroup(q *request) error {
	return w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		gi, err := groupIndex(q, d)
		if err != nil {
			return err
		}
		d.Groups = slices.Delete(d.Groups, gi, gi+1)
		return nil
	}, settingsErrors)
}

// reorderComponents sets every component's group and place at once, from
// the fields "order" ("{group}:{component id}", in order): what the
// editor's drag and drop sends. Every component must be named once.
func (w *Server) reorderComponents(q *request) error {
	return w.changePage(q, "#components-h", func(cur statuspage.Config, d *app.StatusPageDraft) error {
		bad := &errs.Error{Kind: errs.KindInvalid, Message: "The new order does not name each component once; nothing was moved."}
		byID := map[string]app.StatusPageComponentDraft{}
		for gi, g := range cur.Groups {
			for ci, c := range g.Components {
				byID[c.ID] = d.Groups[gi].Components[ci]
			}
		}
		for gi := range d.Groups {
			d.Groups[gi].Components = nil
		}
		order := q.r.PostForm["order"]
		if len(order) != len(byID) {
			return bad
		}
		for _, o := range order {
			g, id, _ := strings.Cut(o, ":")
			n, err := strconv.Atoi(g)
			c, ok := byID[id]
			if err != nil || n < 0 || n >= len(d.Groups) || !ok {
				return bad
			}
			delete(byID, id)
			d.Groups[n].Components = append(d.Groups[n].Components, c)
		}
		return nil
	}, settingsErrors)
}
