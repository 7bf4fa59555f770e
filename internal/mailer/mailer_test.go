package mailer_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/tocsin/tocsin/internal/mailer"
	"github.com/tocsin/tocsin/internal/netguard"
)

const (
	user     = "tocsin"
	password = "s3cret-pw"
)

// How the test server speaks TLS.
type tlsMode int

const (
	startTLS    tlsMode = iota // offers STARTTLS
	implicitTLS                // TLS from the first byte
	noTLS                      // plaintext only, yet offers AUTH
)

// backend is a real SMTP server's storage: what it was told.
type backend struct {
	mechs  []string // AUTH mechanisms offered; none when empty
	refuse string   // a recipient refused with 550

	mu        sync.Mutex
	authTried bool
	got       []delivery
}

type delivery struct {
	from string
	to   []string
	data []byte
}

func (b *backend) NewSession(*smtp.Conn) (smtp.Session, error) { return &session{b: b}, nil }

func (b *backend) deliveries() []delivery {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]delivery(nil), b.got...)
}

func (b *backend) triedAuth() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.authTried
}

type session struct {
	b      *backend
	authed bool
	from   string
	to     []string
}

func (s *session) AuthMechanisms() []string { return s.b.mechs }

func (s *session) Auth(mech string) (sasl.Server, error) {
	s.b.mu.Lock()
	s.b.authTried = true
	s.b.mu.Unlock()
	check := func(u, p string) error {
		if u != user || p != password {
			return smtp.ErrAuthFailed
		}
		s.authed = true
		return nil
	}
	switch mech {
	case "PLAIN":
		return sasl.NewPlainServer(func(_, u, p string) error { return check(u, p) }), nil
	case "LOGIN":
		return &loginServer{check: check}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if len(s.b.mechs) > 0 && !s.authed {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if to == s.b.refuse {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.got = append(s.b.got, delivery{s.from, s.to, data})
	return nil
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }

// loginServer is AUTH LOGIN, which go-sasl offers only as a client.
type loginServer struct {
	step  int
	user  string
	check func(user, pass string) error
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	l.step++
	switch l.step {
	case 1:
		return []byte("Username:"), false, nil
	case 2:
		l.user = string(resp)
		return []byte("Password:"), false, nil
	}
	return nil, true, l.check(l.user, string(resp))
}

// lockedBuffer collects the server's transcript across goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// certificate makes a self-signed certificate for 127.0.0.1 and a pool
// that trusts it.
func certificate(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "tocsin test SMTP"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}

// testServer is a running go-smtp server on loopback.
type testServer struct {
	addr       string
	roots      *x509.CertPool
	transcript *lockedBuffer
}

func serve(t *testing.T, b *backend, mode tlsMode) testServer {
	t.Helper()
	cert, roots := certificate(t)
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := smtp.NewServer(b)
	s.Domain = "mx.test"
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	transcript := &lockedBuffer{}
	s.Debug = transcript
	s.ErrorLog = log.New(io.Discard, "", 0) // clients hanging up are expected here
	switch mode {
	case startTLS:
		s.TLSConfig = tlsConfig
	case implicitTLS:
		l = tls.NewListener(l, tlsConfig)
	case noTLS:
		s.AllowInsecureAuth = true
	}
	go s.Serve(l)
	t.Cleanup(func() { s.Close() })
	return testServer{l.Addr().String(), roots, transcript}
}

// dial is what the caller injects; tests count the connections.
func dialer(dials *atomic.Int32) func(context.Context, string, string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials != nil {
			dials.Add(1)
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
}

func newMailer(t *testing.T, url string, roots *x509.CertPool, dials *atomic.Int32) *mailer.Mailer {
	t.Helper()
	m, err := mailer.New(mailer.Config{URL: url, From: "Tocsin <tocsin@example.com>"}, dialer(dials), &tls.Config{RootCAs: roots})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return m
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

var plainMechs = []string{"PLAIN"}

func message() mailer.Message {
	return mailer.Message{
		To:      []string{"ops@example.com", "Équipe Ops <equipe@example.org>"},
		Subject: "Down: api.example.com — ünïcode ✓ and a subject long enough to need more than one encoded word",
		Text:    "api.example.com is down since 12:00 — ünïcode.\n.a line starting with a dot\n" + strings.Repeat("x", 200) + "\n",
		HTML:    "<p>api.example.com is <b>down</b> — ünïcode.</p>\n.<p>" + strings.Repeat("y", 200) + "</p>\n",
		ID:      "evt_01JD5Z3",
	}
}

func TestSendSTARTTLS(t *testing.T) {
	b := &backend{mechs: plainMechs}
	srv := serve(t, b, startTLS)
	m := newMailer(t, "smtp://"+user+":"+password+"@"+srv.addr, srv.roots, nil)
	msg := message()
	before := time.Now().Truncate(time.Second)
	if err := m.Send(ctxTimeout(t, 10*time.Second), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := b.deliveries()
	if len(got) != 1 {
		t.Fatalf("%d messages arrived, want 1", len(got))
	}
	d := got[0]
	if d.from != "tocsin@example.com" {
		t.Errorf("MAIL FROM %q", d.from)
	}
	if strings.Join(d.to, ",") != "ops@example.com,equipe@example.org" {
		t.Errorf("RCPT TO %q", d.to)
	}
	if !strings.Contains(srv.transcript.String(), "\r\nSTARTTLS\r\n220 ") {
		t.Error("the exchange never used STARTTLS")
	}
	checkMessage(t, d.data, msg, before)
}

// checkMessage parses the message back as a mail reader would.
func checkMessage(t *testing.T, data []byte, want mailer.Message, sent time.Time) {
	t.Helper()
	if bytes.Contains(bytes.ReplaceAll(data, []byte("\r\n"), nil), []byte("\n")) {
		t.Error("a line ends in a bare LF, not CRLF")
	}
	head, body, _ := strings.Cut(string(data), "\r\n\r\n")
	for _, l := range strings.Split(head, "\r\n") {
		if len(l) > 998 {
			t.Errorf("header line longer than 998 characters: %q", l)
		}
	}
	if !strings.Contains(head, "?=\r\n =?") {
		t.Error("the encoded subject is not folded")
	}
	for _, l := range strings.Split(body, "\r\n") {
		if len(l) > 78 {
			t.Errorf("body line longer than 78 characters: %q", l)
		}
	}
	msg, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("ReadMessage: %v\n%s", err, data)
	}
	h := msg.Header
	if from, err := mail.ParseAddress(h.Get("From")); err != nil || from.Name != "Tocsin" || from.Address != "tocsin@example.com" {
		t.Errorf("From %q: %v", h.Get("From"), err)
	}
	to, err := h.AddressList("To")
	if err != nil || len(to) != 2 || to[0].Address != "ops@example.com" || to[1].Name != "Équipe Ops" || to[1].Address != "equipe@example.org" {
		t.Errorf("To %q = %v: %v", h.Get("To"), to, err)
	}
	if subject, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject")); err != nil || subject != want.Subject {
		t.Errorf("Subject %q decodes to %q: %v", h.Get("Subject"), subject, err)
	}
	if date, err := h.Date(); err != nil || date.Before(sent) || date.After(time.Now()) {
		t.Errorf("Date %q: %v", h.Get("Date"), err)
	}
	if id := h.Get("Message-ID"); id != "<"+want.ID+"@example.com>" {
		t.Errorf("Message-ID %q", id)
	}
	if v := h.Get("MIME-Version"); v != "1.0" {
		t.Errorf("MIME-Version %q", v)
	}
	typ, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil || typ != "multipart/alternative" {
		t.Fatalf("Content-Type %q: %v", h.Get("Content-Type"), err)
	}
	r := multipart.NewReader(msg.Body, params["boundary"])
	for _, w := range []struct{ typ, body string }{{"text/plain", want.Text}, {"text/html", want.HTML}} {
		// NextRawPart keeps the transfer encoding, to check it.
		p, err := r.NextRawPart()
		if err != nil {
			t.Fatalf("%s part: %v", w.typ, err)
		}
		if ct := p.Header.Get("Content-Type"); ct != w.typ+"; charset=utf-8" {
			t.Errorf("part Content-Type %q, want %s", ct, w.typ)
		}
		if cte := p.Header.Get("Content-Transfer-Encoding"); cte != "quoted-printable" {
			t.Errorf("%s Content-Transfer-Encoding %q", w.typ, cte)
		}
		body, err := io.ReadAll(quotedprintable.NewReader(p))
		if err != nil {
			t.Fatalf("%s part: %v", w.typ, err)
		}
		if got := strings.ReplaceAll(string(body), "\r\n", "\n"); got != w.body {
			t.Errorf("%s part:\n got %q\nwant %q", w.typ, got, w.body)
		}
	}
	if _, err := r.NextRawPart(); err != io.EOF {
		t.Errorf("after two parts: %v, want EOF", err)
	}
}

func TestSendImplicitTLS(t *testing.T) {
	b := &backend{mechs: plainMechs}
	srv := serve(t, b, implicitTLS)
	m := newMailer(t, "smtps://"+user+":"+password+"@"+srv.addr, srv.roots, nil)
	msg := message()
	before := time.Now().Truncate(time.Second)
	if err := m.Send(ctxTimeout(t, 10*time.Second), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := b.deliveries()
	if len(got) != 1 {
		t.Fatalf("%d messages arrived, want 1", len(got))
	}
	checkMessage(t, got[0].data, msg, before)
}

func TestSendLoginWhenOnlyOffered(t *testing.T) {
	b := &backend{mechs: []string{"LOGIN"}}
	srv := serve(t, b, startTLS)
	m := newMailer(t, "smtp://"+user+":"+password+"@"+srv.addr, srv.roots, nil)
	if err := m.Send(ctxTimeout(t, 10*time.Second), message()); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if n := len(b.deliveries()); n != 1 {
		t.Fatalf("%d messages arrived, want 1", n)
	}
}

// TestSendLocalRelay: ?tls=none speaks plaintext, and a text-only message
// is a single text/plain part.
func TestSendLocalRelay(t *testing.T) {
	b := &backend{}
	srv := serve(t, b, noTLS)
	m := newMailer(t, "smtp://"+srv.addr+"?tls=none", nil, nil)
	msg := mailer.Message{To: []string{"ops@example.com"}, Subject: "plain", Text: "line one\nline two — ü\n"}
	if err := m.Send(ctxTimeout(t, 10*time.Second), msg); err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := b.deliveries()
	if len(got) != 1 {
		t.Fatalf("%d messages arrived, want 1", len(got))
	}
	parsed, err := mail.ReadMessage(bytes.NewReader(got[0].data))
	if err != nil {
		t.Fatal(err)
	}
	if ct := parsed.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	body, err := io.ReadAll(quotedprintable.NewReader(parsed.Body))
	if err != nil || strings.ReplaceAll(string(body), "\r\n", "\n") != msg.Text {
		t.Errorf("body %q: %v", body, err)
	}
	// Without an ID, each message gets its own random Message-ID.
	if id := parsed.Header.Get("Message-ID"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@example.com>") || len(id) < 20 {
		t.Errorf("Message-ID %q", id)
	}
}

// TestSendStableMessageID: retries of one event carry the same Message-ID,
// so mail clients show one message.
func TestSendStableMessageID(t *testing.T) {
	b := &backend{}
	srv := serve(t, b, noTLS)
	m := newMailer(t, "smtp://"+srv.addr+"?tls=none", nil, nil)
	msg := mailer.Message{To: []string{"ops@example.com"}, Subject: "s", Text: "t", ID: "dlv_01.retry"}
	for range 2 {
		if err := m.Send(ctxTimeout(t, 10*time.Second), msg); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	var ids []string
	for _, d := range b.deliveries() {
		parsed, err := mail.ReadMessage(bytes.NewReader(d.data))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, parsed.Header.Get("Message-ID"))
	}
	if len(ids) != 2 || ids[0] != "<dlv_01.retry@example.com>" || ids[1] != ids[0] {
		t.Errorf("Message-IDs %q", ids)
	}
}

func TestSendWrongPassword(t *testing.T) {
	b := &backend{mechs: plainMechs}
	srv := serve(t, b, startTLS)
	m := newMailer(t, "smtp://"+user+":wrong@"+srv.addr, srv.roots, nil)
	err := m.Send(ctxTimeout(t, 10*time.Second), message())
	if err == nil || !strings.Contains(err.Error(), "auth") {
		t.Fatalf("Send = %v, want an auth error", err)
	}
	if !mailer.Permanent(err) {
		t.Errorf("a 535 is not permanent: %v", err)
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("the error shows the password: %v", err)
	}
	if n := len(b.deliveries()); n != 0 {
		t.Errorf("%d messages arrived", n)
	}
}

// TestSendRecipientRefused: one refusal stops the message for everyone, so
// a retry cannot deliver twice.
func TestSendRecipientRefused(t *testing.T) {
	b := &backend{mechs: plainMechs, refuse: "nobody@example.com"}
	srv := serve(t, b, startTLS)
	m := newMailer(t, "smtp://"+user+":"+password+"@"+srv.addr, srv.roots, nil)
	msg := message()
	msg.To = []string{"ops@example.com", "nobody@example.com"}
	err := m.Send(ctxTimeout(t, 10*time.Second), msg)
	if err == nil || !strings.Contains(err.Error(), "RCPT TO <nobody@example.com>") || !strings.Contains(err.Error(), "550") {
		t.Fatalf("Send = %v, want a 550 at RCPT TO <nobody@example.com>", err)
	}
	if !mailer.Permanent(err) {
		t.Errorf("a 550 is not permanent: %v", err)
	}
	if n := len(b.deliveries()); n != 0 {
		t.Errorf("%d messages arrived", n)
	}
}

// TestSendSilentServer: a server that accepts and never speaks holds Send
// only until the context ends.
func TestSendSilentServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	for _, url := range []string{"smtp://" + l.Addr().String(), "smtps://" + l.Addr().String()} {
		t.Run("deadline "+url[:strings.Index(url, ":")], func(t *testing.T) {
			m := newMailer(t, url, nil, nil)
			ctx := ctxTimeout(t, 300*time.Millisecond)
			start := time.Now()
			err := m.Send(ctx, message())
			if elapsed := time.Since(start); elapsed > 2*time.Second {
				t.Errorf("Send took %v with a 300ms deadline", elapsed)
			}
			if err == nil || !strings.Contains(err.Error(), "connect") {
				t.Fatalf("Send = %v, want a connect error", err)
			}
			if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("the error does not say the deadline passed: %v", err)
			}
			if mailer.Permanent(err) {
				t.Errorf("a timeout is permanent: %v", err)
			}
		})
	}
	t.Run("cancel", func(t *testing.T) {
		m := newMailer(t, "smtp://"+l.Addr().String(), nil, nil)
		ctx, cancel := context.WithCancel(ctxTimeout(t, time.Minute))
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		err := m.Send(ctx, message())
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("Send took %v after a cancel at 200ms", elapsed)
		}
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Send = %v, want context.Canceled", err)
		}
	})
}

// TestSendRefusesPlaintext: without STARTTLS, neither credentials nor mail
// leave unless the URL says ?tls=none.
func TestSendRefusesPlaintext(t *testing.T) {
	for name, userinfo := range map[string]string{"with credentials": user + ":" + password + "@", "without": ""} {
		t.Run(name, func(t *testing.T) {
			b := &backend{mechs: plainMechs}
			srv := serve(t, b, noTLS)
			m := newMailer(t, "smtp://"+userinfo+srv.addr, srv.roots, nil)
			err := m.Send(ctxTimeout(t, 10*time.Second), message())
			if err == nil || !strings.Contains(err.Error(), "starttls") {
				t.Fatalf("Send = %v, want a starttls refusal", err)
			}
			if b.triedAuth() {
				t.Error("credentials were offered over plaintext")
			}
			transcript := srv.transcript.String()
			plain := base64.StdEncoding.EncodeToString([]byte("\x00" + user + "\x00" + password))
			for _, leak := range []string{plain, password, "MAIL FROM", "AUTH PLAIN "} {
				if strings.Contains(transcript, leak) {
					t.Errorf("the server saw %q:\n%s", leak, transcript)
				}
			}
			if n := len(b.deliveries()); n != 0 {
				t.Errorf("%d messages arrived", n)
			}
		})
	}
}

// TestSendVerifiesCertificate: a certificate the client does not trust
// stops the exchange at STARTTLS.
func TestSendVerifiesCertificate(t *testing.T) {
	b := &backend{mechs: plainMechs}
	srv := serve(t, b, startTLS)
	m := newMailer(t, "smtp://"+user+":"+password+"@"+srv.addr, x509.NewCertPool(), nil)
	err := m.Send(ctxTimeout(t, 10*time.Second), message())
	if err == nil || !strings.Contains(err.Error(), "starttls") {
		t.Fatalf("Send = %v, want a starttls error", err)
	}
	if b.triedAuth() || len(b.deliveries()) != 0 {
		t.Error("the exchange went on past an untrusted certificate")
	}
}

// TestSendOutboundPolicy: the injected dialer's refusal comes back
// recognisable.
func TestSendOutboundPolicy(t *testing.T) {
	b := &backend{}
	srv := serve(t, b, noTLS)
	policy := netguard.Policy{BlockPrivate: true}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return policy.DialContext(ctx, network, addr, 5*time.Second)
	}
	m, err := mailer.New(mailer.Config{URL: "smtp://" + srv.addr + "?tls=none", From: "tocsin@example.com"}, dial, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = m.Send(ctxTimeout(t, 10*time.Second), message())
	if !netguard.Blocked(err) || !strings.Contains(err.Error(), "connect") {
		t.Errorf("Send = %v, want a blocked connect", err)
	}
}

func TestSendRejectsInvalidMessages(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*mailer.Message)
	}{
		{"CRLF in subject", func(m *mailer.Message) { m.Subject = "down\r\nBcc: victim@example.net" }},
		{"LF in subject", func(m *mailer.Message) { m.Subject = "down\nBcc: victim@example.net" }},
		{"CR in subject", func(m *mailer.Message) { m.Subject = "down\rBcc: victim@example.net" }},
		{"CRLF in recipient", func(m *mailer.Message) { m.To = []string{"ops@example.com\r\nBcc: victim@example.net"} }},
		{"LF in recipient name", func(m *mailer.Message) { m.To = []string{"\"Ops\nBcc: x\" <ops@example.com>"} }},
		{"two addresses in one", func(m *mailer.Message) { m.To = []string{"ops@example.com, victim@example.net"} }},
		{"not an address", func(m *mailer.Message) { m.To = []string{"ops"} }},
		{"no recipients", func(m *mailer.Message) { m.To = nil }},
		{"CRLF in ID", func(m *mailer.Message) { m.ID = "evt\r\nBcc: victim@example.net" }},
		{"angle bracket in ID", func(m *mailer.Message) { m.ID = "evt>x" }},
		{"ID with a leading dot", func(m *mailer.Message) { m.ID = ".evt" }},
	}
	var dials atomic.Int32
	m := newMailer(t, "smtp://"+user+":"+password+"@127.0.0.1:1", nil, &dials)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := message()
			c.mutate(&msg)
			err := m.Send(ctxTimeout(t, 10*time.Second), msg)
			if !errors.Is(err, mailer.ErrInvalidMessage) {
				t.Fatalf("Send = %v, want ErrInvalidMessage", err)
			}
			if !mailer.Permanent(err) {
				t.Errorf("an invalid message is not permanent: %v", err)
			}
		})
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("%d connections made for invalid messages", n)
	}
}

func TestNew(t *testing.T) {
	dial := dialer(nil)
	cases := []struct {
		name string
		cfg  mailer.Config
		want string // in the error; "" = accepted
	}{
		{"valid", mailer.Config{URL: "smtp://u:p@mail.example.com", From: "Tocsin <tocsin@example.com>"}, ""},
		{"bare From", mailer.Config{URL: "smtps://mail.example.com", From: "tocsin@example.com"}, ""},
		{"bad URL", mailer.Config{URL: "http://mail.example.com", From: "tocsin@example.com"}, "URL"},
		{"no From", mailer.Config{URL: "smtp://mail.example.com"}, "From"},
		{"From without domain", mailer.Config{URL: "smtp://mail.example.com", From: "tocsin"}, "From"},
		{"From with a line break", mailer.Config{URL: "smtp://mail.example.com", From: "tocsin@example.com\r\nBcc: x@y"}, "From"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := mailer.New(c.cfg, dial, nil)
			if c.want == "" {
				if err != nil {
					t.Errorf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New = %v, want an error about %s", err, c.want)
			}
		})
	}
	m, err := mailer.New(mailer.Config{URL: "smtp://u:pa55@h", From: "a@b.example"}, dial, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprintf("%v %+v %s", m, m, m); strings.Contains(got, "pa55") {
		t.Errorf("printing a Mailer shows the password: %s", got)
	}
	if _, err := mailer.New(mailer.Config{URL: "smtp://h", From: "a@b.example"}, nil, nil); err == nil {
		t.Error("New accepted a nil dial function")
	}
}

func TestParseURL(t *testing.T) {
	ok := []struct {
		url, host, port string
		implicit, plain bool
		redacted        string
	}{
		{"smtp://mail.example.com", "mail.example.com", "587", false, false, "smtp://mail.example.com:587"},
		{"smtp://user:pa55@mail.example.com:25", "mail.example.com", "25", false, false, "smtp://user:***@mail.example.com:25"},
		{"smtps://user:pa55@mail.example.com", "mail.example.com", "465", true, false, "smtps://user:***@mail.example.com:465"},
		{"smtps://mail.example.com:2465/", "mail.example.com", "2465", true, false, "smtps://mail.example.com:2465"},
		{"smtp://relay:25?tls=none", "relay", "25", false, true, "smtp://relay:25?tls=none"},
		{"smtp://u%40example.com:p%2Fw%40d@[::1]:587", "::1", "587", false, false, "smtp://u%40example.com:***@[::1]:587"},
	}
	for _, c := range ok {
		t.Run(c.url, func(t *testing.T) {
			s, err := mailer.ParseURL(c.url)
			if err != nil {
				t.Fatalf("ParseURL: %v", err)
			}
			if s.Host != c.host || s.Port != c.port || s.Implicit != c.implicit || s.Plaintext != c.plain {
				t.Errorf("got %s host=%q port=%q implicit=%v plaintext=%v", s, s.Host, s.Port, s.Implicit, s.Plaintext)
			}
			if got := s.String(); got != c.redacted {
				t.Errorf("String() = %q, want %q", got, c.redacted)
			}
			if got := fmt.Sprintf("%v %+v %#v", s, s, s); strings.Contains(got, "pa55") {
				t.Errorf("printing shows the password: %s", got)
			}
		})
	}

	bad := []struct{ url, want string }{
		{"", "smtp://"},
		{"mail.example.com:587", "smtp://"},
		{"http://mail.example.com", "smtp://"},
		{"smtp://", "host"},
		{"smtp:mail.example.com", "host"},
		{"smtp://user:s3cr%zzet@mail.example.com", "valid URL"},
		{"smtp://mail.example.com:0", "port"},
		{"smtp://mail.example.com:99999", "port"},
		{"smtp://mail.example.com:smtp", "valid URL"},
		{"smtp://mail.example.com/inbox", "path"},
		{"smtp://mail.example.com#x", "path"},
		{"smtp://user@mail.example.com", "password"},
		{"smtp://:s3cret@mail.example.com", "user name"},
		{"smtp://user:@mail.example.com", "password"},
		{"smtp://mail.example.com?starttls=optional", "tls=none"},
		{"smtp://mail.example.com?password=s3cret", "tls=none"},
		{"smtp://mail.example.com?tls=s3cret", "none"},
		{"smtp://mail.example.com?tls=none&tls=none", "none"},
		{"smtps://mail.example.com?tls=none", "smtps"},
		{"smtp://mail.example.com?tls=%zz", "query"},
	}
	for _, c := range bad {
		t.Run(c.url, func(t *testing.T) {
			_, err := mailer.ParseURL(c.url)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseURL = %v, want a problem about %q", err, c.want)
			}
			if strings.Contains(err.Error(), "s3cr") {
				t.Errorf("the problem quotes the secret: %v", err)
			}
		})
	}
}
