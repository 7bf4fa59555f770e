package httpapi_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/tocsin/tocsin/internal/deliver"
	"github.com/tocsin/tocsin/internal/mailer"
	"github.com/tocsin/tocsin/internal/netguard"
	"github.com/tocsin/tocsin/internal/notify"
	"github.com/tocsin/tocsin/internal/store/storetest"
	"github.com/tocsin/tocsin/internal/wait"
)

// services stands in for Slack, Discord, Teams, PagerDuty, Telegram and
// ntfy on one HTTPS server: it records what each path got.
type services struct {
	srv *httptest.Server
	mu  sync.Mutex
	got map[string][]map[string]any // path → JSON bodies, in order
	hdr map[string][]http.Header
}

func newServices(t *testing.T) *services {
	s := &services{got: map[string][]map[string]any{}, hdr: map[string][]http.Header{}}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m map[string]any
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || json.Unmarshal(body, &m) != nil {
			t.Errorf("%s %s: %s (content type %q)", r.Method, r.URL.Path, body, r.Header.Get("Content-Type"))
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.got[r.URL.Path] = append(s.got[r.URL.Path], m)
		s.hdr[r.URL.Path] = append(s.hdr[r.URL.Path], r.Header.Clone())
		s.mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/pd") {
			w.WriteHeader(http.StatusAccepted) // as the Events API answers
			_, _ = io.WriteString(w, `{"status":"success","message":"Event processed","dedup_key":"x"}`)
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *services) bodies(path string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got[path])
}

// mailSink is an SMTP server that keeps what it is sent.
type mailSink struct {
	mu  sync.Mutex
	got []*mail.Message
	to  [][]string
}

func (m *mailSink) NewSession(*smtp.Conn) (smtp.Session, error) { return &sinkSession{m: m}, nil }

type sinkSession struct {
	m  *mailSink
	to []string
}

func (s *sinkSession) Mail(string, *smtp.MailOptions) error      { return nil }
func (s *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error { s.to = append(s.to, to); return nil }
func (s *sinkSession) Reset()                                    { s.to = nil }
func (s *sinkSession) Logout() error                             { return nil }
func (s *sinkSession) Data(r io.Reader) error {
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	s.m.mu.Lock()
	s.m.got, s.m.to = append(s.m.got, msg), append(s.m.to, s.to)
	s.m.mu.Unlock()
	return nil
}

func (m *mailSink) messages() []*mail.Message {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.got)
}

// startMailSink runs an SMTP server on loopback; its URL is a local relay.
func startMailSink(t *testing.T) (*mailSink, string) {
	sink := &mailSink{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := smtp.NewServer(sink)
	srv.Domain = "mx.test"
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return sink, "smtp://" + l.Addr().String() + "?tls=none"
}

// Every kind of channel gets an incident's life in the shape its service
// documents, through the real notifier: chat services over HTTPS, and
// e-mail through a real SMTP server.
func TestChannelKindsDeliver(t *testing.T) {
	t.Parallel()
	for _, eng := range storetest.Engines(t) {
		t.Run(eng.Name, func(t *testing.T) {
			cfg := fastRetries
			cfg.EmailEnabled = true
			e := newEnvWith(t, eng, cfg)
			svc := newServices(t)
			sink, smtpURL := startMailSink(t)
			m, err := mailer.New(mailer.Config{URL: smtpURL, From: "Tocsin <tocsin@example.test>"}, netguard.Policy{}.Dialer(5*time.Second).DialContext, nil)
			if err != nil {
				t.Fatal(err)
			}
			roots := x509.NewCertPool()
			roots.AddCert(svc.srv.Certificate())
			trust := &tls.Config{RootCAs: roots}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			n := deliver.New(deliver.Options{App: e.app, Node: "node-1", Poll: 20 * time.Millisecond, Mailer: deliver.SMTP(m),
				TLS:       trust,
				Endpoints: notify.Endpoints{PagerDuty: svc.srv.URL + "/pd", Telegram: svc.srv.URL + "/tg"}})
			go func() { defer close(done); n.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-done })

			k := e.ownerKey()
			const routingKey = "0123456789abcdef0123456789abcdef"
			for _, c := range []map[string]any{
				{"kind": "slack", "secrets": map[string]any{"hookUrl": svc.srv.URL + "/slack"}},
				{"kind": "discord", "secrets": map[string]any{"hookUrl": svc.srv.URL + "/discord"}},
				{"kind": "msteams", "secrets": map[string]any{"hookUrl": svc.srv.URL + "/teams"}},
				{"kind": "pagerduty", "secrets": map[string]any{"routingKey": routingKey}},
				{"kind": "telegram", "config": map[string]any{"chatId": "-100123"}, "secrets": map[string]any{"botToken": "123:secret"}},
				{"kind": "ntfy", "config": map[string]any{"url": svc.srv.URL + "/ntfy", "topic": "ops"}, "secrets": map[string]any{"accessToken": "tk_ntfy"}},
				{"kind": "email", "config": map[string]any{"to": []string{"oncall@example.test"}}},
			} {
				c["name"] = c["kind"]
				if r := e.req("POST", "/api/v1/notification-channels", k, c); r.status != http.StatusCreated {
					t.Fatalf("create %s: %d %s", c["kind"], r.status, r.body)
				}
			}
			inc := e.incidentStory(t, k, "Checkout <b>is</b> down")

			wait.For(t, 20*time.Second, "every service to hear the incident", func() bool {
				return len(svc.bodies("/slack")) == 4 && len(svc.bodies("/discord")) == 4 && len(svc.bodies("/teams")) == 4 &&
					len(svc.bodies("/pd")) == 3 && len(svc.bodies("/tg/bot123:secret/sendMessage")) == 4 &&
					len(svc.bodies("/ntfy/")) == 4 && len(sink.messages()) == 4
			})

			for i, b := range svc.bodies("/slack") {
				blocks, _ := b["blocks"].([]any)
				text, _ := b["text"].(string)
				if text == "" || len(blocks) == 0 || blocks[0].(map[string]any)["type"] != "section" ||
					blocks[0].(map[string]any)["text"].(map[string]any)["type"] != "mrkdwn" || strings.Contains(text, "<b>") {
					t.Errorf("slack %d: %v", i, b)
				}
			}
			for i, b := range svc.bodies("/discord") {
				embeds, _ := b["embeds"].([]any)
				if len(embeds) != 1 || embeds[0].(map[string]any)["title"] == "" ||
					!slices.Equal(anyStrings(b["allowed_mentions"].(map[string]any)["parse"]), []string{}) {
					t.Errorf("discord %d: %v", i, b)
				}
			}
			for i, b := range svc.bodies("/teams") {
				att, _ := b["attachments"].([]any)
				if b["type"] != "message" || len(att) != 1 || att[0].(map[string]any)["contentType"] != "application/vnd.microsoft.card.adaptive" ||
					att[0].(map[string]any)["content"].(map[string]any)["type"] != "AdaptiveCard" {
					t.Errorf("teams %d: %v", i, b)
				}
			}
			pd := svc.bodies("/pd")
			for i, want := range []string{"trigger", "acknowledge", "resolve"} {
				if pd[i]["routing_key"] != routingKey || pd[i]["event_action"] != want || pd[i]["dedup_key"] != inc {
					t.Errorf("pagerduty %d: %v, want %s of %s", i, pd[i], want, inc)
				}
			}
			if p, _ := pd[0]["payload"].(map[string]any); p["summary"] == "" || p["severity"] != "critical" || p["source"] == "" {
				t.Errorf("pagerduty trigger payload: %v", pd[0]["payload"])
			}
			for i, b := range svc.bodies("/tg/bot123:secret/sendMessage") {
				if b["chat_id"] != "-100123" || b["parse_mode"] != "HTML" || !strings.Contains(b["text"].(string), "Checkout &lt;b&gt;is&lt;/b&gt; down") {
					t.Errorf("telegram %d: %v", i, b)
				}
			}
			for i, b := range svc.bodies("/ntfy/") {
				if b["topic"] != "ops" || b["title"] == "" || b["message"] == "" || b["priority"] == nil {
					t.Errorf("ntfy %d: %v", i, b)
				}
			}
			svc.mu.Lock()
			ntfyAuth := svc.hdr["/ntfy/"][0].Get("Authorization")
			svc.mu.Unlock()
			if h := ntfyAuth; h != "Bearer tk_ntfy" {
				t.Errorf("ntfy authorization: %q", h)
			}
			msgs := sink.messages()
			if s := msgs[0].Header.Get("Subject"); !strings.HasPrefix(s, "[Tocsin]") || !strings.Contains(s, "Checkout") {
				t.Errorf("e-mail subject: %q", s)
			}
			if to := msgs[0].Header.Get("To"); !strings.Contains(to, "oncall@example.test") || !strings.Contains(msgs[0].Header.Get("From"), "tocsin@example.test") {
				t.Errorf("e-mail headers: %v", msgs[0].Header)
			}

			// PagerDuty's incident.updated sends nothing, and still succeeds.
			for _, c := range e.req("GET", "/api/v1/notification-channels", k, nil).json(t)["data"].([]any) {
				ch := c.(map[string]any)
				for _, d := range e.settled(t, k, ch["id"].(string), 4) {
					if d["status"] != "succeeded" {
						t.Errorf("%s: %v", ch["kind"], d)
					}
				}
			}
			// A service's hook URL never shows in what the API returns.
			for _, c := range e.req("GET", "/api/v1/notification-channels", k, nil).json(t)["data"].([]any) {
				if b, _ := json.Marshal(c); strings.Contains(string(b), "/slack") || strings.Contains(string(b), routingKey) {
					t.Errorf("a secret is shown: %s", b)
				}
			}
		})
	}
}
