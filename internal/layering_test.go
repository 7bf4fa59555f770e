package internal_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestLayering holds the architecture: imports point inward. The API (and
// later the web app) reach the database only through app, which is how
// both keep the same rules; the domain imports no I/O.
func TestLayering(t *testing.T) {
	const mod = "github.com/tocsin/tocsin/internal/"
	forbidden := map[string][]string{
		"httpapi":     {mod + "store", mod + "config", "database/sql"},
		"app":         {mod + "httpapi", mod + "config", "net/http"},
		"store":       {mod + "app", mod + "httpapi", mod + "config"},
		"monitor":     {"net/http", "database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "secrets", mod + "config", mod + "ids"},
		"incident":    {"net/http", "database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "config"},
		"secrets":     {mod + "store", mod + "app", mod + "httpapi"},
		"recur":       {"net", "net/http", "database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "monitor"},
		"probe":       {"database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "config"},
		"scheduler":   {"net/http", mod + "httpapi", mod + "config"},
		"notify":      {"net/http", "database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "config"},
		"deliver":     {"database/sql", mod + "store", mod + "httpapi", mod + "config"},
		"mailer":      {"database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "config"},
		"errs":        {"net", "net/http", "database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "monitor", mod + "config"},
		"clean":       {"net", "net/http", "database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "monitor"},
		"maintenance": {"net", "net/http", "database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "config"},
		"account":     {"net", "net/http", "database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "config"},
		"ratelimit":   {"net", "net/http", "database/sql", mod + "store", mod + "app", mod + "httpapi", mod + "config"},
	}
	for pkg, bad := range forbidden {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, "./"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkg, err, out)
		}
		imports := strings.Fields(string(out))
		if len(imports) == 0 {
			t.Fatalf("%s: no imports listed; the check would prove nothing", pkg)
		}
		for _, b := range bad {
			if slices.Contains(imports, b) {
				t.Errorf("internal/%s imports %s", pkg, b)
			}
		}
	}
}
