package clientaddr

import (
	"net/http"
	"testing"
)

func TestClient(t *testing.T) {
	r, err := Parse("127.0.0.0/8, 10.0.0.0/8,::1")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, peer string
		xff, fwd   []string
		want       string
	}{
		{"peer not trusted: headers ignored", "203.0.113.9:5000", []string{"198.51.100.1"}, nil, "203.0.113.9"},
		{"trusted peer, no header", "127.0.0.1:5000", nil, nil, "127.0.0.1"},
		{"trusted peer, one hop", "127.0.0.1:5000", []string{"198.51.100.1"}, nil, "198.51.100.1"},
		{"spoofed left part is skipped", "127.0.0.1:5000", []string{"1.2.3.4, 198.51.100.1"}, nil, "198.51.100.1"},
		{"trusted hops from the right are skipped", "127.0.0.1:5000", []string{"1.2.3.4, 198.51.100.1, 10.1.2.3"}, nil, "198.51.100.1"},
		{"several header lines form one list", "127.0.0.1:5000", []string{"1.2.3.4", "198.51.100.1"}, nil, "198.51.100.1"},
		{"garbage right of an address stops trust at the proxy", "127.0.0.1:5000", []string{"198.51.100.1, nonsense"}, nil, "127.0.0.1"},
		{"all hops trusted: the left-most", "127.0.0.1:5000", []string{"10.0.0.1, 10.0.0.2"}, nil, "10.0.0.1"},
		{"IPv6 peer trusted", "[::1]:5000", []string{"2001:db8::7"}, nil, "2001:db8::7"},
		{"Forwarded for=", "127.0.0.1:5000", nil, []string{`for=1.2.3.4;proto=https, for="[2001:db8::7]:443"`}, "2001:db8::7"},
		{"Forwarded with port", "127.0.0.1:5000", nil, []string{`for="198.51.100.1:1234"`}, "198.51.100.1"},
		{"Forwarded obfuscated hop stops trust", "127.0.0.1:5000", nil, []string{`for=1.2.3.4, for=_hidden`}, "127.0.0.1"},
		{"X-Forwarded-For wins over Forwarded", "127.0.0.1:5000", []string{"198.51.100.1"}, []string{"for=1.2.3.4"}, "198.51.100.1"},
		{"IPv4-mapped peer", "[::ffff:127.0.0.1]:5000", []string{"198.51.100.1"}, nil, "198.51.100.1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := &http.Request{RemoteAddr: c.peer, Header: http.Header{}}
			for _, v := range c.xff {
				req.Header.Add("X-Forwarded-For", v)
			}
			for _, v := range c.fwd {
				req.Header.Add("Forwarded", v)
			}
			if got := r.Client(req); got != c.want {
				t.Errorf("Client = %q, want %q", got, c.want)
			}
		})
	}
	var none Resolver
	req := &http.Request{RemoteAddr: "127.0.0.1:1", Header: http.Header{"X-Forwarded-For": {"198.51.100.1"}}}
	if got := none.Client(req); got != "127.0.0.1" {
		t.Errorf("no trusted proxies: %q", got)
	}
}

func TestParse(t *testing.T) {
	r, err := Parse(" 192.168.1.7 ,fd00::/8,")
	if err != nil {
		t.Fatal(err)
	}
	if r.String() != "192.168.1.7/32,fd00::/8" {
		t.Errorf("%s", r)
	}
	if _, err := Parse("10.0.0.0/8,banana,300.1.1.1/8"); err == nil {
		t.Error("bad prefixes accepted")
	} else if got := err.Error(); got != `"banana" is not a CIDR prefix such as 10.0.0.0/8 or fd00::/8`+"\n"+`"300.1.1.1/8" is not a CIDR prefix such as 10.0.0.0/8 or fd00::/8` {
		t.Errorf("error: %s", got)
	}
}
