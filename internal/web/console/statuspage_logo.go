package console

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/errs"
)

// maxLogoForm bounds a logo upload's body: the largest logo and the
// multipart form around it.
const maxLogoForm = app.MaxStatusPageLogo + 8<<10

// uploadLogo stores the form's file (multipart, field "logo") as the
// page's logo, as the API's PUT …/logo does with a body.
func (w *Server) uploadLogo(q *request) {
	id, ok := w.statusPageID(q)
	if !ok || !w.may(q, account.ScopeStatusPagesWrite) {
		return
	}
	refuse := func(msg string) {
		p, err := w.app.GetStatusPage(q.ctx(), q.actor, id)
		if err != nil {
			w.fail(q.w, q.r, &q.ws, err)
			return
		}
		w.renderEditor(q, http.StatusUnprocessableEntity, p, func(v *StatusPageEditor) {
			v.LogoErrors = FormErrors{Fields: map[string]string{"logo": msg}}
		})
	}
	tooBig := fmt.Sprintf("The logo must be at most %d KiB.", app.MaxStatusPageLogo>>10)
	if err := q.r.ParseMultipartForm(maxLogoForm); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			refuse(tooBig)
		} else {
			refuse("Choose an image file to upload.")
		}
		return
	}
	f, _, err := q.r.FormFile("logo")
	if err != nil {
		refuse("Choose an image file to upload.")
		return
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, app.MaxStatusPageLogo+1))
	if err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	if _, err := w.app.SetStatusPageLogo(q.ctx(), q.actor, id, data); err != nil {
		var e *errs.Error
		if errs.KindOf(err) != errs.KindInvalid || !errors.As(err, &e) {
			w.fail(q.w, q.r, &q.ws, err)
			return
		}
		refuse(e.Message)
		return
	}
	q.redirect(statusPagesPath(q)+"/"+id+"#logo-h", "status-page-saved")
}

func (w *Server) removeLogo(q *request) {
	id, ok := w.statusPageID(q)
	if !ok || !w.may(q, account.ScopeStatusPagesWrite) {
		return
	}
	if _, err := w.app.DeleteStatusPageLogo(q.ctx(), q.actor, id); err != nil {
		w.fail(q.w, q.r, &q.ws, err)
		return
	}
	q.redirect(statusPagesPath(q)+"/"+id+"#logo-h", "status-page-saved")
}
