package app

// TEMPORARY: stands in for the status page resource and the public reads
// being built beside this; removed when they merge.

import (
	"context"
	"time"

	"github.com/tocsin/tocsin/internal/incident"
)

type PublicPageConfig struct {
	ID, WorkspaceID, Slug, Title, Description, Visibility, PasswordHash string
	PasswordVersion                                                     int64
	CustomDomain                                                        string
	ShowUptime                                                          bool
	UptimeDays                                                          int
	PausedComponents                                                    string
	ShowIncidents, ShowMaintenance                                      bool
	Accent                                                              string
	FooterLinks                                                         []PublicLink
	LogoVersion                                                         string
	UpdatedAt                                                           time.Time
	Groups                                                              []PublicGroup
}
type PublicLink struct{ Label, URL string }
type PublicGroup struct {
	Name       string
	Components []PublicComponent
}
type PublicComponent struct{ ID, Name, Description, SubjectType, SubjectID string }
type SubjectRef struct{ Type, ID string }
type PublicWindow struct {
	ID, Name, Description string
	StartsAt, EndsAt      time.Time
	Active                bool
	SubjectIDs            []string
}

func (a *App) PublicStatusPage(ctx context.Context, slug string) (PublicPageConfig, error) {
	panic("stub")
}
func (a *App) PublicStatusPageByDomain(ctx context.Context, host string) (PublicPageConfig, error) {
	panic("stub")
}
func (a *App) PublicStatusPageLogo(ctx context.Context, pageID string) (string, []byte, string, error) {
	panic("stub")
}
func (a *App) CheckStatusPagePassword(cfg PublicPageConfig, password string) bool { panic("stub") }
func (a *App) PublicIncidents(ctx context.Context, workspaceID string, subjects []SubjectRef, since time.Time, limit int) ([]*incident.Incident, error) {
	panic("stub")
}
func (a *App) PublicIncidentMonths(ctx context.Context, workspaceID string, subjects []SubjectRef, month time.Time) ([]*incident.Incident, time.Time, time.Time, error) {
	panic("stub")
}
func (a *App) PublicMaintenance(ctx context.Context, workspaceID string, subjects []SubjectRef, now time.Time, horizon time.Duration) ([]PublicWindow, error) {
	panic("stub")
}

func publicTitle(inc *incident.Incident) string { return "" }
