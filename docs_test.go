// Package tocsin holds no code: its test keeps README.md and docs/ true to
// the repository they describe.
package tocsin

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// docFiles are the documents a user reads: README.md and docs/*.md.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, files...)
}

// slug is the anchor GitHub gives a heading: lower case, spaces to
// hyphens, punctuation other than hyphens and underscores dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// headings lists a markdown file's headings, outside code blocks, and
// their anchors (a repeated one numbered as GitHub does).
func headings(t *testing.T, path string) (titles []string, anchors map[string]bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	anchors = map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(string(b)) {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		titles = append(titles, title)
		s := slug(title)
		if n := seen[s]; n > 0 {
			anchors[s+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[s] = true
		}
		seen[s]++
	}
	return titles, anchors
}

// prose is a markdown file's lines outside fenced code blocks.
func prose(text string) []string {
	var out []string
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out = append(out, line)
		}
	}
	return out
}

var (
	mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	// A path in the repository, named in the text: it starts with one of
	// the repository's top-level directories.
	repoPath = regexp.MustCompile(`(?:^|[\s(\x60"'])\.?/?((?:docs|deploy|cmd|internal|bench|\.ci)/[\w./{},*-]*[\w}*])`)
	// A section named as docs/x.md, "Section".
	sectionRef = regexp.MustCompile(`(docs/[\w-]+\.md),\s+"([^"]+)"`)
	braces     = regexp.MustCompile(`\{([^{}]*)\}`)
	// Any markdown file named in the text, as docs/x.md or x.md.
	mdName = regexp.MustCompile(`(?:^|[\s(\x60"'\[])([\w./-]+\.md)\b`)
)

// expand turns a{b,c}d into abd and acd.
func expand(p string) []string {
	m := braces.FindStringSubmatchIndex(p)
	if m == nil {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[m[2]:m[3]], ",") {
		out = append(out, expand(p[:m[0]]+alt+p[m[1]:])...)
	}
	return out
}

// Every link, path and section the documents name exists: a reader is
// never sent to a file the repository does not hold, or to a section
// that is not there.
func TestDocsReferencesExist(t *testing.T) {
	exists := func(p string) bool {
		if strings.ContainsAny(p, "*") {
			m, _ := filepath.Glob(p)
			return len(m) > 0
		}
		_, err := os.Stat(p)
		return err == nil
	}
	for _, doc := range docFiles(t) {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(prose(string(b)), "\n")
		// Section references run across line breaks.
		flat := strings.Join(strings.Fields(text), " ")

		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), file)
				if !exists(path) {
					t.Errorf("%s links to %s, which does not exist", doc, target)
					continue
				}
			}
			if anchor != "" {
				if _, anchors := headings(t, path); !anchors[anchor] {
					t.Errorf("%s links to %s: %s has no section #%s", doc, target, path, anchor)
				}
			}
		}
		for _, m := range repoPath.FindAllStringSubmatch(text, -1) {
			for _, p := range expand(strings.TrimSuffix(m[1], ".")) {
				if !exists(p) {
					t.Errorf("%s names %s, which is not in the repository", doc, p)
				}
			}
		}
		for _, m := range mdName.FindAllStringSubmatch(text, -1) {
			if !exists(m[1]) && !exists(filepath.Join(filepath.Dir(doc), m[1])) {
				t.Errorf("%s names %s, which is not in the repository", doc, m[1])
			}
		}
		if i := strings.Index(flat, "§"); i >= 0 {
			t.Errorf("%s cites a numbered section of a document the repository does not hold: %q", doc, flat[max(0, i-40):min(len(flat), i+20)])
		}
		for _, m := range sectionRef.FindAllStringSubmatch(flat, -1) {
			if !exists(m[1]) {
				continue // reported above
			}
			titles, _ := headings(t, m[1])
			if !slices.ContainsFunc(titles, func(h string) bool { return strings.EqualFold(h, m[2]) }) {
				t.Errorf("%s refers to %s, %q: no such section (sections: %q)", doc, m[1], m[2], titles)
			}
		}
	}
}

// The checker itself: what it must find, and must not.
func TestDocsCheckerParts(t *testing.T) {
	if got := slug("Backup and restore: SQLite (`VACUUM INTO`)"); got != "backup-and-restore-sqlite-vacuum-into" {
		t.Errorf("slug = %q", got)
	}
	if got := expand("internal/store/migrations/{sqlite,postgres}"); !slices.Equal(got, []string{"internal/store/migrations/sqlite", "internal/store/migrations/postgres"}) {
		t.Errorf("expand = %q", got)
	}
	var found []string
	for _, m := range repoPath.FindAllStringSubmatch("see docs/checks.md, run `go run ./cmd/tocsin serve`, not /var/lib/tocsin or example.com/docs/x", -1) {
		found = append(found, m[1])
	}
	if !slices.Equal(found, []string{"docs/checks.md", "cmd/tocsin"}) {
		t.Errorf("paths found: %q", found)
	}
}
