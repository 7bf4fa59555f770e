package stamp

import (
	"encoding/json"
	"testing"
	"time"
)

func TestWireFormat(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 25, 15, 0, 0, 0, berlin), "2026-11-25T14:00:00.000000Z"},
		{time.Date(2026, 11, 25, 14, 0, 0, 123456789, time.UTC), "2026-11-25T14:00:00.123456Z"},
		{time.Date(2026, 7, 1, 2, 0, 0, 1000, berlin), "2026-07-01T00:00:00.000001Z"},
	}
	for _, c := range cases {
		if got := Format(c.in); got != c.want {
			t.Errorf("Format(%v) = %s, want %s", c.in, got, c.want)
		}
		b, err := json.Marshal(struct {
			At  Time  `json:"at"`
			Ptr *Time `json:"ptr"`
		}{Of(c.in), Ptr(&c.in)})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"at":"` + c.want + `","ptr":"` + c.want + `"}`; string(b) != want {
			t.Errorf("json: %s, want %s", b, want)
		}
		var back struct{ At Time }
		if err := json.Unmarshal([]byte(`{"At":"`+c.want+`"}`), &back); err != nil || !back.At.Equal(c.in.Truncate(time.Microsecond)) {
			t.Errorf("decode %s: %v %v", c.want, back.At, err)
		}
	}
	if Ptr(nil) != nil {
		t.Error("Ptr(nil) is not nil")
	}
}
