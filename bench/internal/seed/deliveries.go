package seed

import (
	"context"
	"fmt"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/netguard"
	"github.com/tocsin/tocsin/internal/notify"
)

// IncidentMessage is every seeded incident's first update.
const IncidentMessage = "We are looking into elevated error rates on the public API."

// Incidents writes, with no server running, channels owners, each in a
// workspace of its own with a webhook channel to hook(i), and n manual
// incidents spread over them in turn: one incident.opened delivery each,
// pending for the server that starts next. It goes through the
// application, as the API would, because the API's server would deliver
// them at once. It returns the channels' signing secrets.
func Incidents(ctx context.Context, dbURL, keyring string, channels, n int, hook func(int) string, logf func(string, ...any)) ([]string, error) {
	db, a, err := openApp(ctx, dbURL, keyring, time.Now, app.Config{Outbound: netguard.Policy{}})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	actors := make([]app.Actor, channels)
	secrets := make([]string, channels)
	err = Many(ctx, channels, logf, func(i int) error {
		u, err := a.CreateUser(ctx, app.UserRequest{Email: fmt.Sprintf("owner%d@bench.test", i),
			Workspace: fmt.Sprintf("bench-%d", i), Role: account.RoleOwner})
		if err != nil {
			return err
		}
		actors[i] = app.Actor{UserID: u.User.ID, WorkspaceID: u.Workspace.ID, Role: account.RoleOwner}
		_, secrets[i], err = a.CreateChannel(ctx, actors[i], app.ChannelDraft{Name: "receiver", Kind: notify.Webhook, Enabled: true,
			Config: notify.Config{URL: hook(i)}})
		return err
	})
	if err != nil {
		return nil, err
	}
	return secrets, Many(ctx, n, logf, func(i int) error {
		_, err := a.CreateIncident(ctx, actors[i%channels], app.IncidentDraft{Title: fmt.Sprintf("Bench incident %06d", i), Message: IncidentMessage})
		return err
	})
}
