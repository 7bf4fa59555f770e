package metrics

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/tocsin/tocsin/internal/errs"
)

func TestObjectiveValidate(t *testing.T) {
	for _, o := range []Objective{{0.9, 30}, {0.99999, 1}, {0.5, 90}, {0.999, 7}} {
		if err := o.Validate(); err != nil {
			t.Errorf("%+v: %v", o, err)
		}
	}
	for _, c := range []struct {
		o        Objective
		pointers []string
	}{
		{Objective{0, 30}, []string{"/target"}},
		{Objective{1, 30}, []string{"/target"}},
		{Objective{0.999991, 30}, []string{"/target"}},
		{Objective{-0.5, 30}, []string{"/target"}},
		{Objective{math.NaN(), 30}, []string{"/target"}},
		{Objective{0.999, 0}, []string{"/periodDays"}},
		{Objective{0.999, 91}, []string{"/periodDays"}},
		{Objective{2, -1}, []string{"/target", "/periodDays"}},
	} {
		err := c.o.Validate()
		var e *errs.Error
		if !errors.As(err, &e) || e.Kind != errs.KindInvalid || len(e.Fields) != len(c.pointers) {
			t.Errorf("%+v: got %v, want fields %v", c.o, err, c.pointers)
			continue
		}
		for i, f := range e.Fields {
			if f.Pointer != c.pointers[i] || !strings.Contains(f.Message, "must be") {
				t.Errorf("%+v: field %+v", c.o, f)
			}
		}
	}
}

// The worked example: a 99.9% objective allows 3.6 s down per hour of
// known time, so an hour with exactly that much down burns at 1.
func TestBurnRateByHand(t *testing.T) {
	o := Objective{Target: 0.999, PeriodDays: 30}
	hour := Durations{Up: 3600*time.Second - 3600*time.Millisecond, Down: 3600 * time.Millisecond}
	wantRatio(t, "burn", o.BurnRate(hour), 1)
	// Unknown and paused time change nothing; down time doubles it.
	wantRatio(t, "burn with unknown", o.BurnRate(hour.Add(Durations{Unknown: time.Hour, Paused: time.Hour})), 1)
	wantRatio(t, "burn at twice", o.BurnRate(Durations{Up: 3600*time.Second - 7200*time.Millisecond, Down: 7200 * time.Millisecond}), 2)
	if r := o.BurnRate(Durations{Unknown: time.Hour, Maintenance: time.Hour}); r != nil {
		t.Errorf("burn with nothing known: %v", *r)
	}
}

func TestBudget(t *testing.T) {
	o := Objective{Target: 0.999, PeriodDays: 30}
	period := Durations{Up: 30*24*time.Hour - 10*time.Minute, Down: 10 * time.Minute, Unknown: 5 * time.Hour, Paused: time.Hour}
	b := o.Budget(period, Durations{Up: time.Hour}, Durations{Up: 5 * time.Hour, Down: time.Hour})
	// 30 days known: 43.2 min allowed, 10 min spent, 33.2/43.2 left.
	if b.Allowed != 2592*time.Second || b.Spent != 10*time.Minute {
		t.Errorf("allowed %v spent %v", b.Allowed, b.Spent)
	}
	wantRatio(t, "left", b.Left, 1-600.0/2592)
	wantRatio(t, "burn 1h", b.BurnRate1h, 0)
	wantRatio(t, "burn 6h", b.BurnRate6h, (1.0/6)/0.001)
	over := o.Budget(Durations{Up: 24 * time.Hour, Down: time.Hour}, Durations{}, Durations{})
	if over.Left == nil || *over.Left >= 0 || over.BurnRate1h != nil || over.BurnRate6h != nil {
		t.Errorf("overspent: %+v", over)
	}
	if none := o.Budget(Durations{Unknown: time.Hour}, Durations{}, Durations{}); none.Left != nil || none.Allowed != 0 {
		t.Errorf("nothing known: %+v", none)
	}
}

func TestFiring(t *testing.T) {
	o := Objective{Target: 0.999, PeriodDays: 30}
	// down is the share of each window spent down; the factors are met
	// exactly (14.4 × 0.1% of an hour is 51.84 s).
	burn := func(down map[time.Duration]float64) func(time.Duration) Durations {
		return func(d time.Duration) Durations {
			bad := time.Duration(math.Round(down[d] * float64(d)))
			return Durations{Up: d - bad, Down: bad}
		}
	}
	for _, c := range []struct {
		name string
		down map[time.Duration]float64
		want string // "" when nothing fires
	}{
		{"fast", map[time.Duration]float64{time.Hour: 0.0144, 5 * time.Minute: 0.5, 6 * time.Hour: 0.01, 30 * time.Minute: 0.01}, "fast"},
		{"fast but recovered", map[time.Duration]float64{time.Hour: 0.05, 5 * time.Minute: 0.01, 6 * time.Hour: 0.001, 30 * time.Minute: 0.001}, ""},
		{"slow", map[time.Duration]float64{time.Hour: 0.01, 5 * time.Minute: 0.01, 6 * time.Hour: 0.006, 30 * time.Minute: 0.01}, "slow"},
		{"slow, short below", map[time.Duration]float64{time.Hour: 0.01, 5 * time.Minute: 0.01, 6 * time.Hour: 0.007, 30 * time.Minute: 0.005}, ""},
		{"quiet", map[time.Duration]float64{}, ""},
	} {
		r, ok := o.Firing(burn(c.down))
		if ok != (c.want != "") || r.Name != c.want {
			t.Errorf("%s: got %q %v, want %q", c.name, r.Name, ok, c.want)
		}
	}
	if r, ok := o.Firing(func(time.Duration) Durations { return Durations{Unknown: time.Hour} }); ok {
		t.Errorf("fired %q with nothing known", r.Name)
	}
}

// Every field of the methodology is filled, named in JSON and documented.
func TestMethod(t *testing.T) {
	m := Method()
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		for i := range v.NumField() {
			f, fv := v.Type().Field(i), v.Field(i)
			p := path + "." + f.Name
			if f.Tag.Get("json") == "" || f.Tag.Get("doc") == "" {
				t.Errorf("%s: json or doc tag missing", p)
			}
			if fv.IsZero() {
				t.Errorf("%s: empty", p)
			}
			if fv.Kind() == reflect.Struct {
				walk(fv, p)
			}
		}
	}
	walk(reflect.ValueOf(m), "Methodology")
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"version":"2"`, `"down":"A monitor`, `"method":"DDSketch"`, `"relativeAccuracy":0.01`, `"over":"known checks"`, `"known":["UP","DEGRADED","DOWN"]`, `"unadjustedAvailability"`, `"nullRatios"`} {
		if !strings.Contains(string(b), s) {
			t.Errorf("methodology JSON lacks %s: %s", s, b)
		}
	}
	ls, _ := json.Marshal(LatencySummary{})
	if string(ls) != `{"p50":null,"p90":null,"p95":null,"p99":null,"min":null,"max":null,"mean":null}` {
		t.Errorf("summary JSON: %s", ls)
	}
}
