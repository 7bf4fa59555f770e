package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/app"
	"github.com/tocsin/tocsin/internal/config"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
)

// adminApp opens the existing database for a one-shot operator command.
// Logs go to stderr so stdout carries only the command's result.
func adminApp(ctx context.Context, name string, args []string, getenv func(string) string, stderr io.Writer, extra func(*flag.FlagSet)) (*app.App, *store.DB, error) {
	_, log, db, err := adminStore(ctx, name, args, getenv, stderr, extra, false)
	if err != nil {
		return nil, nil, err
	}
	// Operator commands never touch sealed secrets, so they need no keyring.
	return app.New(db, nil, time.Now, log, app.Config{}), db, nil
}

// adminStore reads the configuration and opens and migrates the database,
// naming it on stderr. Only migrate (create) makes a new one: the other
// commands, pointed at the wrong place, say so and leave nothing behind.
func adminStore(ctx context.Context, name string, args []string, getenv func(string) string, stderr io.Writer, extra func(*flag.FlagSet), create bool) (config.Config, *slog.Logger, *store.DB, error) {
	only := config.DatabaseFlags
	switch {
	case create: // migrate may seal header values with serve's keys
		only = append(slices.Clone(only), "secret-keys")
	case name == "workspace show": // the server's default quotas, as serve takes them
		only = append(slices.Clone(only), "max-monitors", "max-heartbeats", "min-interval", "max-maintenance-windows", "max-channels")
	case name == "workspace set-quota": // its --min-interval is the workspace's own
		only = append(slices.Clone(only), "max-monitors", "max-heartbeats", "max-maintenance-windows", "max-channels")
	}
	c, err := config.ParseOnly(name, args, getenv, only, toStderr(stderr, extra))
	if err := errors.Join(err, c.ValidateDatabase()); err != nil {
		return c, nil, nil, err
	}
	log := newLogger(c, stderr)
	missing := fmt.Errorf("no Tocsin database in %s; pass --data-dir or TOCSIN_DATABASE_URL", c.DataDir)
	if c.IsPostgres() {
		fmt.Fprintf(stderr, "using PostgreSQL database %s\n", config.RedactURL(c.DatabaseURL))
		missing = fmt.Errorf("no Tocsin database at %s (it has no Tocsin tables); pass --data-dir or TOCSIN_DATABASE_URL, or run tocsin migrate first", config.RedactURL(c.DatabaseURL))
	} else {
		path := store.SQLitePath(c.DatabaseURL)
		fmt.Fprintf(stderr, "using SQLite database %s\n", path)
		if filepath.Join(c.DataDir, "tocsin.db") != filepath.Clean(path) {
			missing = fmt.Errorf("no Tocsin database in %s; pass --data-dir or TOCSIN_DATABASE_URL", filepath.Dir(path))
		}
		if fi, err := os.Stat(path); !create && (err != nil || fi.Size() == 0) {
			return c, nil, nil, missing
		}
	}
	if !create {
		has, err := hasSchema(ctx, c.DatabaseURL)
		if err != nil {
			return c, nil, nil, err
		}
		if !has {
			return c, nil, nil, missing
		}
	}
	db, err := openStore(ctx, c, log, false)
	return c, log, db, err
}

// toStderr has a command's flag set write its usage and problems to stderr,
// then registers the command's own flags.
func toStderr(stderr io.Writer, extra func(*flag.FlagSet)) func(*flag.FlagSet) {
	return func(fs *flag.FlagSet) {
		fs.SetOutput(stderr)
		if extra != nil {
			extra(fs)
		}
	}
}

// hasSchema reports whether the database holds Tocsin's tables, looking
// without changing anything.
func hasSchema(ctx context.Context, databaseURL string) (bool, error) {
	db, err := store.Open(ctx, databaseURL)
	if err != nil {
		return false, err
	}
	defer db.Close()
	return db.HasSchema(ctx)
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	c, log, db, err := adminStore(ctx, "migrate", args, getenv, stderr, nil, true)
	if err != nil {
		return err
	}
	defer db.Close()
	kr, err := migrateKeyring(ctx, c, db, log)
	if err != nil {
		return err
	}
	if err := sealPlaintext(ctx, app.New(db, kr, time.Now, log, app.Config{}), log); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "database is up to date")
	return nil
}

// migrateKeyring is the keyring serve uses, loaded only when the database
// holds header values to seal: migrating needs no keys otherwise. It never
// generates a key file: values sealed under a key serve does not have
// would be lost to its checks.
func migrateKeyring(ctx context.Context, c config.Config, db *store.DB, log *slog.Logger) (*secrets.Keyring, error) {
	plain, err := db.PlainHeaderConfigs(ctx, "", 1)
	if err != nil || len(plain) == 0 {
		return nil, err
	}
	if c.SecretKeys == "" {
		if _, err := os.Stat(keyFile(c)); c.IsPostgres() || err != nil {
			return nil, errors.New("secret-keys: required to seal the request header values that earlier versions stored in plaintext: give the keys serve uses (or let serve seal them)")
		}
	}
	return keyring(c, log)
}

// inTurn runs fn, a command's writes, in this process's turn to write
// (store.DB.WriteTurn): beside a SQLite server busy writing, a command
// left to find a gap between the server's transactions could wait for
// one past its busy timeout.
func inTurn(ctx context.Context, db *store.DB, fn func() error) error {
	release, err := db.WriteTurn(ctx)
	if err != nil {
		return err
	}
	defer release()
	return fn()
}

// stringList collects a repeatable flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

func userCreate(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	var email, workspace, role string
	var pwStdin bool
	a, db, err := adminApp(ctx, "user create", args, getenv, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&email, "email", "", "the user's e-mail address (required)")
		fs.StringVar(&workspace, "workspace", "default", "workspace id or slug; created when missing")
		fs.StringVar(&role, "role", "editor", "owner, admin, editor or viewer")
		fs.BoolVar(&pwStdin, "password-stdin", false, "read the password from stdin instead of generating a one-time password")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	req := app.UserRequest{Email: email, Workspace: workspace, Role: account.Role(role)}
	if pwStdin {
		b, err := io.ReadAll(io.LimitReader(stdin, 4096))
		if err != nil {
			return err
		}
		req.Password = strings.TrimRight(string(b), "\r\n")
	}
	var u app.CreatedUser
	err = inTurn(ctx, db, func() (err error) {
		u, err = a.CreateUser(ctx, req)
		return err
	})
	if err != nil {
		return describe(err)
	}
	if u.Existing {
		fmt.Fprintf(stderr, "%s already had an account: added them to workspace %s (%s) as %s; their password is unchanged\n", u.User.Email, u.Workspace.Slug, u.Workspace.ID, role)
		return nil
	}
	fmt.Fprintf(stdout, "created user %s (%s) as %s in workspace %s (%s)\n", u.User.Email, u.User.ID, role, u.Workspace.Slug, u.Workspace.ID)
	if u.GeneratedPassword != "" {
		fmt.Fprintf(stdout, "one-time password: %s\n", u.GeneratedPassword)
	}
	return nil
}

func userResetPassword(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var email string
	a, db, err := adminApp(ctx, "user reset-password", args, getenv, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&email, "email", "", "the user's e-mail address (required)")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if email == "" {
		return errors.New("--email: required")
	}
	var pw string
	err = inTurn(ctx, db, func() (err error) {
		pw, err = a.ResetPassword(ctx, email)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%s has a new one-time password; it must be changed at the next sign-in\n", email)
	// Only the password on stdout, so scripts can capture it.
	fmt.Fprintln(stdout, pw)
	return nil
}

func keyCreate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var req app.OperatorKeyRequest
	var scopes stringList
	a, db, err := adminApp(ctx, "key create", args, getenv, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&req.Email, "email", "", "the user the key acts for (required)")
		fs.StringVar(&req.Workspace, "workspace", "", "workspace id or slug the key is bound to")
		fs.Var(&scopes, "scope", "a scope, repeatable: "+scopeList()+"; only scopes the user's role in the workspace grants (for an account-wide key without --workspace: their strongest role); or all, alone: every one of those")
		fs.BoolVar(&req.AccountWide, "account-wide", false, "the key acts in any of the user's workspaces, chosen per request with X-Workspace-Id")
		fs.StringVar(&req.Name, "name", "", "a label for the key")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	req.Scopes = scopes
	var k app.NewKey
	err = inTurn(ctx, db, func() (err error) {
		k, err = a.CreateKeyForUser(ctx, req)
		return err
	})
	if err != nil {
		return describe(err)
	}
	// Only the key on stdout, so scripts can capture it.
	fmt.Fprintln(stdout, k.Secret)
	return nil
}

// secretKey prints a new keyring entry. Its one argument is the key id;
// anything that looks like a flag is taken as one, so "-h" asks for help
// rather than naming a key.
func secretKey(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("secret-key", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, "Usage: tocsin secret-key [id]\n\n"+
			"Prints a new entry for TOCSIN_SECRET_KEYS, id:<64 hex characters>; the id\n"+
			"(default k1) is 1-16 characters of a-z, 0-9, _ and -.\n")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return errUsage
	}
	id := "k1"
	if fs.NArg() == 1 {
		id = fs.Arg(0)
	}
	spec, err := secrets.GenerateKeySpec(id)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, spec)
	return nil
}

func scopeList() string {
	s := make([]string, len(account.Scopes))
	for i, sc := range account.Scopes {
		s[i] = string(sc)
	}
	return strings.Join(s, ", ")
}

// describe spells out validation errors for a terminal.
func describe(err error) error {
	var me *errs.Error
	if !errors.As(err, &me) || len(me.Fields) == 0 {
		return err
	}
	var b strings.Builder
	b.WriteString(me.Message)
	for _, f := range me.Fields {
		fmt.Fprintf(&b, "\n  --%s: %s", f.Pointer, f.Message)
	}
	return errors.New(b.String())
}

func keyList(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var email string
	a, db, err := adminApp(ctx, "key list", args, getenv, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&email, "email", "", "whose keys (required)")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	keys, err := a.KeysOf(ctx, email)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%-30s %-12s %-30s %-20s %-20s %s\n", "ID", "PREFIX", "WORKSPACE", "LAST USED", "REVOKED", "SCOPES")
	for _, k := range keys {
		ws := k.WorkspaceID
		if ws == "" {
			ws = "(account-wide)"
		}
		fmt.Fprintf(stdout, "%-30s %-12s %-30s %-20s %-20s %s\n", k.ID, k.Prefix+"…", ws, when(k.LastUsedAt), when(k.RevokedAt), joinScopes(k.Scopes))
	}
	return nil
}

func keyRevoke(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var id string
	a, db, err := adminApp(ctx, "key revoke", args, getenv, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&id, "id", "", "the key's id, key_… (see key list)")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if err := inTurn(ctx, db, func() error { return a.RevokeKey(ctx, id) }); err != nil {
		return fmt.Errorf("revoking %s: %w", id, err)
	}
	fmt.Fprintf(stdout, "revoked %s\n", id)
	return nil
}

func when(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func joinScopes(s []account.Scope) string {
	out := make([]string, len(s))
	for i, sc := range s {
		out[i] = string(sc)
	}
	return strings.Join(out, ",")
}
