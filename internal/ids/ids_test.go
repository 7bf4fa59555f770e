package ids_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/ids"
)

// The generator keeps process-wide state (the last millisecond used), so
// every test takes its times from later(), which only moves forward: a test
// freezing the clock never holds back the timestamps of the next one.
var clock = time.Now().Truncate(time.Millisecond)

func later() time.Time {
	clock = clock.Add(time.Hour)
	return clock
}

var crockford = regexp.MustCompile(`^[0-9A-HJKMNP-TV-Z]{26}$`)

// timestamp decodes the 48-bit millisecond timestamp of an id.
func timestamp(t *testing.T, id string) int64 {
	t.Helper()
	_, enc, ok := strings.Cut(id, "_")
	if !ok || len(enc) != 26 {
		t.Fatalf("malformed id %q", id)
	}
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	var v uint64 // the first 10 characters are 50 bits: 2 padding bits, then 48 of time
	for i := range 10 {
		v = v<<5 | uint64(strings.IndexByte(alphabet, enc[i]))
	}
	if v>>48 != 0 {
		t.Fatalf("id %q has bits set above the 128 encoded", id)
	}
	return int64(v)
}

var prefixes = []string{
	ids.Monitor, ids.Heartbeat, ids.Incident, ids.StatusPage, ids.Channel, ids.Event,
	ids.Delivery, ids.Key, ids.Workspace, ids.User, ids.Request, ids.Maintenance, ids.Observation, ids.StatusPageComponent,
}

func TestPrefixes(t *testing.T) {
	// DESIGN §2 names these; the others are ours.
	want := map[string]string{
		"mon": ids.Monitor, "hb": ids.Heartbeat, "inc": ids.Incident, "sp": ids.StatusPage,
		"nch": ids.Channel, "evt": ids.Event, "dlv": ids.Delivery, "key": ids.Key, "ws": ids.Workspace,
	}
	for w, got := range want {
		if got != w {
			t.Errorf("prefix %q, want %q", got, w)
		}
	}
	seen := map[string]bool{}
	for _, p := range prefixes {
		if seen[p] {
			t.Errorf("prefix %q used twice", p)
		}
		seen[p] = true
	}
}

func TestNewFormat(t *testing.T) {
	now := later()
	for _, p := range prefixes {
		t.Run(p, func(t *testing.T) {
			id := ids.New(p, now)
			rest, ok := strings.CutPrefix(id, p+"_")
			if !ok {
				t.Fatalf("%q does not start with %q", id, p+"_")
			}
			if !crockford.MatchString(rest) {
				t.Fatalf("%q is not 26 Crockford base32 characters", rest)
			}
			if rest[0] > '7' {
				t.Errorf("%q encodes more than 128 bits", rest)
			}
			if !ids.Valid(p, id) {
				t.Errorf("Valid(%q, %q) = false", p, id)
			}
			if got := timestamp(t, id); got != now.UnixMilli() {
				t.Errorf("timestamp = %d, want %d", got, now.UnixMilli())
			}
		})
	}
}

func TestValid(t *testing.T) {
	good := ids.New(ids.Monitor, later())
	enc := strings.TrimPrefix(good, "mon_")
	cases := []struct {
		name   string
		prefix string
		id     string
		want   bool
	}{
		{"made by New", "mon", good, true},
		{"all zeros", "mon", "mon_" + strings.Repeat("0", 26), true},
		{"largest 128-bit value", "mon", "mon_7" + strings.Repeat("Z", 25), true},
		{"other prefix", "hb", good, false},
		{"prefix of the prefix", "mo", good, false},
		{"longer prefix", "monx", good, false},
		{"no prefix", "mon", enc, false},
		{"no underscore", "mon", "mon" + enc, false},
		{"dash instead of underscore", "mon", "mon-" + enc, false},
		{"25 characters", "mon", "mon_" + enc[:25], false},
		{"27 characters", "mon", good + "0", false},
		{"lower case", "mon", "mon_" + strings.ToLower(enc), false},
		{"letter I", "mon", "mon_" + enc[:25] + "I", false},
		{"letter L", "mon", "mon_" + enc[:25] + "L", false},
		{"letter O", "mon", "mon_" + enc[:25] + "O", false},
		{"letter U", "mon", "mon_" + enc[:25] + "U", false},
		{"hyphen", "mon", "mon_" + enc[:25] + "-", false},
		{"non-ASCII", "mon", "mon_" + enc[:24] + "é", false},
		{"empty", "mon", "", false},
		{"prefix only", "mon", "mon_", false},
		{"leading space", "mon", " " + good, false},
		{"trailing newline", "mon", good + "\n", false},
		// 26 characters hold 130 bits; an id is 128, so the first
		// character is at most 7 (as in ULID).
		{"more than 128 bits", "mon", "mon_8" + strings.Repeat("0", 25), false},
		{"all Z", "mon", "mon_" + strings.Repeat("Z", 26), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ids.Valid(c.prefix, c.id); got != c.want {
				t.Errorf("Valid(%q, %q) = %v, want %v", c.prefix, c.id, got, c.want)
			}
		})
	}
}

// TestIncreasingAtFrozenTime: 1e5 ids in one millisecond still increase and
// keep that millisecond.
func TestIncreasingAtFrozenTime(t *testing.T) {
	now := later()
	const n = 100_000
	prev := ids.New(ids.Event, now)
	for i := range n {
		id := ids.New(ids.Event, now)
		if id <= prev {
			t.Fatalf("id %d: %q is not above %q", i, id, prev)
		}
		prev = id
	}
	if got := timestamp(t, prev); got != now.UnixMilli() {
		t.Errorf("timestamp after %d ids = %d, want %d", n, got, now.UnixMilli())
	}
}

// TestSortableByTime: ids made at later milliseconds sort later, whatever
// their random parts, and carry their own millisecond.
func TestSortableByTime(t *testing.T) {
	start := later()
	steps := []time.Duration{0, time.Millisecond, 2 * time.Millisecond, time.Second, time.Minute, 24 * time.Hour, 365 * 24 * time.Hour}
	var made []string
	for _, d := range steps {
		at := start.Add(d)
		for range 3 { // several per millisecond too
			id := ids.New(ids.Monitor, at)
			if got := timestamp(t, id); got != at.UnixMilli() {
				t.Errorf("id at +%v has timestamp %d, want %d", d, got, at.UnixMilli())
			}
			made = append(made, id)
		}
	}
	clock = start.Add(steps[len(steps)-1])
	if !slices.IsSorted(made) {
		t.Errorf("ids do not sort in creation order: %q", made)
	}
	shuffled := slices.Clone(made)
	slices.Reverse(shuffled)
	slices.Sort(shuffled)
	if !slices.Equal(shuffled, made) {
		t.Error("sorting the ids does not give creation order")
	}
}

// TestSubMillisecondIgnored: times within one millisecond share it.
func TestSubMillisecondIgnored(t *testing.T) {
	at := later()
	a := ids.New(ids.Incident, at.Add(100*time.Microsecond))
	b := ids.New(ids.Incident, at.Add(900*time.Microsecond))
	if timestamp(t, a) != at.UnixMilli() || timestamp(t, b) != at.UnixMilli() || b <= a {
		t.Errorf("a=%q b=%q at %d", a, b, at.UnixMilli())
	}
}

// TestClockGoingBackwards: within a process ids keep increasing even when
// the clock steps back.
func TestClockGoingBackwards(t *testing.T) {
	at := later()
	a := ids.New(ids.Delivery, at)
	b := ids.New(ids.Delivery, at.Add(-time.Second))
	if b <= a {
		t.Errorf("after a step back: %q is not above %q", b, a)
	}
}

// TestUniqueAcrossGoroutines: concurrent callers never get the same id, and
// each caller's ids increase. Run with -race.
func TestUniqueAcrossGoroutines(t *testing.T) {
	const workers, each = 16, 5_000
	frozen := later()
	results := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			out := make([]string, 0, each)
			for i := range each {
				at := frozen
				if w%2 == 1 { // half use a moving clock
					at = frozen.Add(time.Duration(i) * time.Microsecond * 10)
				}
				out = append(out, ids.New(ids.Observation, at))
			}
			results[w] = out
		})
	}
	wg.Wait()
	clock = frozen.Add(time.Second)
	seen := make(map[string]bool, workers*each)
	for w, out := range results {
		if !slices.IsSorted(out) {
			t.Errorf("worker %d: ids not increasing", w)
		}
		for _, id := range out {
			if seen[id] {
				t.Fatalf("duplicate id %q", id)
			}
			seen[id] = true
			if !ids.Valid(ids.Observation, id) {
				t.Fatalf("invalid id %q", id)
			}
		}
	}
	if len(seen) != workers*each {
		t.Errorf("%d unique ids, want %d", len(seen), workers*each)
	}
}

// TestOutOfRangeTimeDoesNotPoisonLaterIDs: one id made with a time the
// 48-bit timestamp cannot hold (a zero time.Time from a forgotten clock, a
// time before 1970) must not stamp every later id of the process with a
// bogus time. Each case runs in a child process, since the generator's
// state is process-wide.
func TestOutOfRangeTimeDoesNotPoisonLaterIDs(t *testing.T) {
	bad := map[string]time.Time{
		"zero time":   {},
		"before 1970": time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC),
	}
	if name := os.Getenv("TOCSIN_IDS_CHILD"); name != "" {
		_ = ids.New(ids.Monitor, bad[name])
		now := time.Now()
		id := ids.New(ids.Monitor, now)
		if got, want := timestamp(t, id), now.UnixMilli(); got != want {
			fmt.Printf("after an id at %v, an id made at %v carries %v\n",
				bad[name], now.UTC().Format(time.RFC3339), time.UnixMilli(got).UTC().Format(time.RFC3339))
			os.Exit(1)
		}
		return
	}
	for name := range bad {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestOutOfRangeTimeDoesNotPoisonLaterIDs$")
			cmd.Env = append(os.Environ(), "TOCSIN_IDS_CHILD="+name)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%v: %s", err, out)
			}
		})
	}
}
