// Package deploy holds the files that run Tocsin (a Dockerfile, a compose
// file, a systemd unit); its tests keep them working and hardened, since
// no Docker daemon or systemd is at hand where the tests run.
package deploy

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"
)

// dockerfile reads the Dockerfile as instructions: continuation lines
// joined, comments dropped.
func dockerfile(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	cur := ""
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == "" && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur += strings.TrimSuffix(trimmed, "\\") + " "
			continue
		}
		out = append(out, cur+trimmed)
		cur = ""
	}
	return out
}

// shellWords splits a RUN line as sh would for the simple quoting it uses
// (single and double quotes, no escapes), after expanding ${NAME} from
// args.
func shellWords(t *testing.T, line string, args map[string]string) []string {
	t.Helper()
	line = regexp.MustCompile(`\$\{(\w+)\}`).ReplaceAllStringFunc(line, func(m string) string {
		name := m[2 : len(m)-1]
		v, ok := args[name]
		if !ok {
			t.Fatalf("the build line uses ${%s}, which no ARG with a default defines", name)
		}
		return v
	})
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		case c == '&' || c == ';' || c == '|' || c == '$' || c == '`':
			t.Fatalf("the build line is more than one command (%q): keep it one go build", line)
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// The Dockerfile's build step, run here as written (only its output path
// changed), makes a static binary that runs: no interpreter, no shared
// library, cgo off (so the SQLite driver is pure Go, and works), paths
// trimmed.
func TestDockerfileBuildsStaticBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	args := map[string]string{}
	var build string
	for _, ins := range dockerfile(t) {
		kw, rest, _ := strings.Cut(ins, " ")
		switch strings.ToUpper(kw) {
		case "ARG":
			if name, def, ok := strings.Cut(rest, "="); ok {
				args[name] = def
			}
		case "RUN":
			if strings.Contains(rest, "go build") {
				if build != "" {
					t.Fatal("the Dockerfile has two go build steps")
				}
				build = rest
			}
		}
	}
	if build == "" {
		t.Fatal("no RUN … go build in the Dockerfile")
	}
	words := shellWords(t, build, args)
	env := os.Environ()
	for len(words) > 0 && strings.Contains(words[0], "=") {
		env = append(env, words[0])
		words = words[1:]
	}
	if !slices.Contains(env, "CGO_ENABLED=0") {
		t.Errorf("the build step does not set CGO_ENABLED=0: %q", build)
	}
	if len(words) < 2 || words[0] != "go" || words[1] != "build" {
		t.Fatalf("the build step is not a go build: %q", words)
	}
	out := filepath.Join(t.TempDir(), "tocsin")
	i := slices.Index(words, "-o")
	if i < 0 || i+1 >= len(words) || words[i+1] != "/out/tocsin" {
		t.Fatalf("the build step does not write /out/tocsin (which the final stage copies): %q", words)
	}
	words[i+1] = out
	cmd := exec.Command(words[0], words[1:]...)
	cmd.Dir = ".." // the Dockerfile's WORKDIR holds the repository's root
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%q: %v\n%s", words, err, b)
	}

	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary names a dynamic loader (PT_INTERP): it is not static")
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v (%v)", libs, err)
	}
	b, err := exec.Command("go", "version", "-m", out).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"build\tCGO_ENABLED=0", "build\t-trimpath=true", "dep\tmodernc.org/sqlite"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("go version -m lacks %q:\n%s", want, b)
		}
	}
	// The binary runs and opens SQLite: a driver that needs cgo builds
	// with CGO_ENABLED=0 but fails here.
	data := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, out, "migrate")
	run.Env = append(os.Environ(), "TOCSIN_DATA_DIR="+data)
	if b, err := run.CombinedOutput(); err != nil {
		t.Fatalf("tocsin migrate with the built binary: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(data, "tocsin.db")); err != nil {
		t.Errorf("migrate made no SQLite database: %v", err)
	}
}

// The image runs as a non-root user, keeps its data in /data, answers on
// 8080 and checks its own health with tocsin healthcheck.
func TestDockerfileRuntime(t *testing.T) {
	ins := dockerfile(t)
	final := ins[slices.IndexFunc(ins, func(s string) bool { return strings.HasPrefix(s, "FROM gcr.io/distroless/static") }):]
	if len(final) == len(ins) {
		t.Fatal("no distroless static stage")
	}
	has := func(prefix string) bool {
		return slices.ContainsFunc(final, func(s string) bool { return strings.HasPrefix(s, prefix) })
	}
	for _, want := range []string{
		"USER 65532:65532",
		"ENV TOCSIN_DATA_DIR=/data",
		"VOLUME /data",
		"EXPOSE 8080",
		"COPY --from=build --chown=65532:65532 /out/data /data",
		`ENTRYPOINT ["/tocsin"]`,
		`CMD ["serve"]`,
	} {
		if !has(want) {
			t.Errorf("the final stage lacks %q", want)
		}
	}
	i := slices.IndexFunc(final, func(s string) bool { return strings.HasPrefix(s, "HEALTHCHECK") })
	if i < 0 || !strings.HasSuffix(final[i], `CMD ["/tocsin", "healthcheck"]`) {
		t.Errorf("no HEALTHCHECK running /tocsin healthcheck in exec form")
	}
}

// unitKeys reads a systemd unit's [Service] assignments; a key set more
// than once keeps every value.
func unitKeys(t *testing.T, path string) map[string][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string][]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			section = line
		case section == "[Service]":
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("%s: not a key=value line: %q", path, line)
			}
			keys[k] = append(keys[k], v)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// The unit keeps its sandbox: each of these settings, exactly.
func TestUnitHardening(t *testing.T) {
	keys := unitKeys(t, "tocsin.service")
	want := map[string]string{
		"DynamicUser":             "yes",
		"User":                    "tocsin",
		"StateDirectory":          "tocsin",
		"StateDirectoryMode":      "0700",
		"UMask":                   "0077",
		"NoNewPrivileges":         "yes",
		"CapabilityBoundingSet":   "",
		"AmbientCapabilities":     "",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"PrivateTmp":              "yes",
		"PrivateDevices":          "yes",
		"PrivateUsers":            "yes",
		"ProtectHostname":         "yes",
		"ProtectClock":            "yes",
		"ProtectKernelTunables":   "yes",
		"ProtectKernelModules":    "yes",
		"ProtectKernelLogs":       "yes",
		"ProtectControlGroups":    "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
		"RestrictNamespaces":      "yes",
		"RestrictRealtime":        "yes",
		"RestrictSUIDSGID":        "yes",
		"LockPersonality":         "yes",
		"MemoryDenyWriteExecute":  "yes",
		"SystemCallArchitectures": "native",
		"Restart":                 "on-failure",
		"EnvironmentFile":         "-/etc/tocsin/tocsin.env",
	}
	for k, v := range want {
		got, ok := keys[k]
		if !ok {
			t.Errorf("%s is not set (want %s=%s)", k, k, v)
		} else if len(got) != 1 || got[0] != v {
			t.Errorf("%s = %q, want exactly %q", k, got, v)
		}
	}
	if !slices.Contains(keys["SystemCallFilter"], "@system-service") {
		t.Errorf("SystemCallFilter = %q, want @system-service among them", keys["SystemCallFilter"])
	}
	if !slices.Contains(keys["Environment"], "TOCSIN_DATA_DIR=/var/lib/tocsin") {
		t.Errorf("Environment = %q, want TOCSIN_DATA_DIR=/var/lib/tocsin", keys["Environment"])
	}
	// Settings that would undo the sandbox.
	for _, k := range []string{"ReadWritePaths", "PermissionsStartOnly", "ExecStartPre"} {
		if _, ok := keys[k]; ok {
			t.Errorf("%s is set: the sandbox relies on DynamicUser and StateDirectory alone, nothing running with more rights", k)
		}
	}
}

// systemd itself accepts the unit without a warning, when
// systemd-analyze is installed.
func TestUnitVerifies(t *testing.T) {
	tool, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed; TestUnitHardening still checks the unit's settings")
	}
	b, err := os.ReadFile("tocsin.service")
	if err != nil {
		t.Fatal(err)
	}
	// verify wants ExecStart's program to exist: this test's binary stands
	// in for /usr/local/bin/tocsin.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("ExecStart=/usr/local/bin/tocsin serve\n")) {
		t.Fatal("the unit's ExecStart is not /usr/local/bin/tocsin serve")
	}
	b = bytes.Replace(b, []byte("ExecStart=/usr/local/bin/tocsin "), []byte("ExecStart="+self+" "), 1)
	unit := filepath.Join(t.TempDir(), "tocsin.service")
	if err := os.WriteFile(unit, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, "verify", unit).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// The compose file runs Tocsin on PostgreSQL 16, started once the database
// answers, with the secret keys required.
func TestCompose(t *testing.T) {
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type service struct {
		Image       string                       `yaml:"image"`
		Restart     string                       `yaml:"restart"`
		Environment map[string]string            `yaml:"environment"`
		Volumes     []string                     `yaml:"volumes"`
		DependsOn   map[string]map[string]string `yaml:"depends_on"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
		Build struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
	}
	var c struct {
		Services map[string]service `yaml:"services"`
		Volumes  map[string]any     `yaml:"volumes"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	pg, app := c.Services["postgres"], c.Services["tocsin"]
	if pg.Image != "postgres:16" {
		t.Errorf("postgres image %q, want postgres:16", pg.Image)
	}
	if len(pg.Healthcheck.Test) < 2 || !strings.Contains(pg.Healthcheck.Test[1], "pg_isready") {
		t.Errorf("postgres healthcheck %q does not run pg_isready", pg.Healthcheck.Test)
	}
	if got := app.DependsOn["postgres"]["condition"]; got != "service_healthy" {
		t.Errorf("tocsin depends on postgres with condition %q, want service_healthy", got)
	}
	if !strings.HasPrefix(app.Environment["TOCSIN_DATABASE_URL"], "postgres://") {
		t.Errorf("TOCSIN_DATABASE_URL = %q", app.Environment["TOCSIN_DATABASE_URL"])
	}
	if !strings.HasPrefix(app.Environment["TOCSIN_SECRET_KEYS"], "${TOCSIN_SECRET_KEYS:?") {
		t.Errorf("TOCSIN_SECRET_KEYS = %q: compose must refuse to start without it", app.Environment["TOCSIN_SECRET_KEYS"])
	}
	for name, s := range c.Services {
		if s.Restart == "" || s.Restart == "no" {
			t.Errorf("service %s has no restart policy", name)
		}
		for _, v := range s.Volumes {
			vol, _, _ := strings.Cut(v, ":")
			if _, ok := c.Volumes[vol]; !ok {
				t.Errorf("service %s mounts %q, not a named volume", name, v)
			}
		}
	}
	if df := filepath.Join(app.Build.Context, app.Build.Dockerfile); filepath.Clean(filepath.Join(".", app.Build.Context)) != ".." || df != "../deploy/Dockerfile" {
		t.Errorf("tocsin builds %s from %s, want deploy/Dockerfile from the repository's root", app.Build.Dockerfile, app.Build.Context)
	}
}
