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
func (w *Server) uploadLogo(q *request) error {
	id, err := w.statusPageID(q)
	if err != nil {
		return err
	}
	if err := w.may(q, account.ScopeStatusPagesWrite); err != nil {
		return err
	}
	refused := func(msg string) error {
		p, err := w.app.GetStatusPage(q.ctx(), q.actor, id)
		if err != nil {
			return err
		}
		return w.renderEditor(q, http.StatusUnprocessableEntity, p, func(v *StatusPageEditor) {
			v.LogoErrors = FormErrors{Fields: map[string]string{"logo": msg}}
		})
	}
	tooBig := fmt.Sprintf("The logo must be at most %d KiB.", app.MaxStatusPageLogo>>10)
	if err := q.r.ParseMultipartForm(maxLogoForm); err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return refused(tooBig)
		}
		return refused("Choose an image file to upload.")
	}
	f, _, err := q.r.FormFile("logo")
	if err != nil {
		return refused("Choose an image file to upload.")
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, app.MaxStatusPageLogo+1))
	if err != nil {
		return err
	}
	if _, err := w.app.SetStatusPageLogo(q.ctx(), q.actor, id, data); err != nil {
		var e *errs.Error
		if errs.KindOf(err) != errs.KindInvalid || !errors.As(err, &e) {
			return err
		}
		return refused(e.Message)
	}
	return q.redirect(statusPagesPath(q)+"/"+id+"#logo-h", "status-page-saved")
}

func (w *Server) removeLogo(q *request) error {
	id, err := w.statusPageID(q)
	if err != nil {
		return err
	}
	if err := w.may(q, account.ScopeStatusPagesWrite); err != nil {
		return err
	}
	if _, err := w.app.DeleteStatusPageLogo(q.ctx(), q.actor, id); err != nil {
		return err
	}
	return q.redirect(statusPagesPath(q)+"/"+id+"#logo-h", "status-page-saved")
}
