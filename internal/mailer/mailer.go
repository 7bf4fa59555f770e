// Package mailer sends e-mail notifications through the operator's SMTP
// server: one message per Send, over TLS unless the operator says the
// server is a local relay, bounded by the caller's context.
package mailer

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is the SMTP server e-mail notifications go through.
type Config struct {
	// URL is smtp://user:pass@host:587 (STARTTLS, required unless the URL
	// ends in ?tls=none, meant for a local relay) or smtps://user:pass@host:465
	// (TLS from the first byte). The port defaults to 587 or 465.
	URL string
	// From is the From address, e.g. "Tocsin <tocsin@example.com>".
	From string
}

// Server is a parsed SMTP URL. It prints with the password hidden.
type Server struct {
	Host, Port string
	Implicit   bool // smtps://: TLS from the first byte
	Plaintext  bool // smtp://…?tls=none: no TLS at all
	user, pass string
}

// ParseURL reads an SMTP URL. Its problems are sentences that never quote
// the URL, which may hold a password.
func ParseURL(raw string) (Server, error) {
	var s Server
	u, err := url.Parse(raw)
	if err != nil {
		return s, errors.New("is not a valid URL (percent-encode special characters in the user name and password)")
	}
	switch u.Scheme {
	case "smtp":
		s.Port = "587"
	case "smtps":
		s.Implicit, s.Port = true, "465"
	default:
		return s, errors.New("must start with smtp:// (STARTTLS) or smtps:// (TLS)")
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return s, errors.New("has no host")
	}
	s.Host = u.Hostname()
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return s, fmt.Errorf("port %q must be a number from 1 to 65535", p)
		}
		s.Port = p
	}
	if (u.Path != "" && u.Path != "/") || u.Fragment != "" {
		return s, errors.New("must not have a path; only user:password, host, port and ?tls=none are used")
	}
	if u.User != nil {
		s.user = u.User.Username()
		s.pass, _ = u.User.Password()
		if s.user == "" || s.pass == "" {
			return s, errors.New("must have both a user name and a password, or neither")
		}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return s, errors.New("has a malformed query; the only parameter is tls=none")
	}
	for k, v := range q {
		if k != "tls" {
			return s, fmt.Errorf("unknown parameter %q: the only one is tls=none", k)
		}
		if len(v) != 1 || v[0] != "none" {
			return s, errors.New("tls: the only value is none (no TLS, for a local relay)")
		}
		if s.Implicit {
			return s, errors.New("tls=none contradicts smtps://, which is TLS from the first byte")
		}
		s.Plaintext = true
	}
	return s, nil
}

// String is the URL with the password replaced by ***.
func (s Server) String() string {
	scheme := "smtp"
	if s.Implicit {
		scheme = "smtps"
	}
	user := ""
	if s.user != "" {
		user = url.User(s.user).String() + ":***@"
	}
	query := ""
	if s.Plaintext {
		query = "?tls=none"
	}
	return scheme + "://" + user + net.JoinHostPort(s.Host, s.Port) + query
}

// GoString keeps %#v from printing the password.
func (s Server) GoString() string { return s.String() }

// Message is one e-mail.
type Message struct {
	To         []string // addresses, each "a@example.com" or "Name <a@example.com>"
	Subject    string
	Text, HTML string // HTML may be empty: the message is then text only
	ID         string // makes the Message-ID <ID@domain of From>, so retries of one event dedupe; random when empty
}

// ErrInvalidMessage is wrapped by refusals of a message itself; sending it
// again can never succeed.
var ErrInvalidMessage = errors.New("invalid message")

// errNoStartTLS refuses a server that would take credentials and mail in
// the clear.
var errNoStartTLS = errors.New("the server does not offer STARTTLS; refusing to send credentials or mail in the clear (add ?tls=none to the URL only for a local relay)")

// defaultTimeout bounds a Send whose context has no deadline, so a server
// that trickles bytes cannot hold a delivery forever.
const defaultTimeout = time.Minute

// Mailer sends messages through one SMTP server.
type Mailer struct {
	server Server
	from   *mail.Address
	domain string // of From, for Message-IDs
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	tls    *tls.Config
	now    func() time.Time
}

// String names the server, keeping %v of a Mailer from printing the
// password.
func (m *Mailer) String() string { return "mailer via " + m.server.String() }

// New checks the configuration. dial is how connections are made (the
// outbound policy's dialer); tlsConfig may be nil for the system roots.
func New(cfg Config, dial func(ctx context.Context, network, addr string) (net.Conn, error), tlsConfig *tls.Config) (*Mailer, error) {
	server, err := ParseURL(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("mailer: URL %w", err)
	}
	if strings.ContainsAny(cfg.From, "\r\n") {
		return nil, errors.New("mailer: From contains a line break")
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("mailer: From: %w", err)
	}
	if dial == nil {
		return nil, errors.New("mailer: no dial function")
	}
	tc := &tls.Config{}
	if tlsConfig != nil {
		tc = tlsConfig.Clone()
	}
	if tc.ServerName == "" {
		tc.ServerName = server.Host
	}
	tc.MinVersion = max(tc.MinVersion, tls.VersionTLS12)
	return &Mailer{
		server: server,
		from:   from,
		domain: from.Address[strings.LastIndexByte(from.Address, '@')+1:],
		dial:   dial,
		tls:    tc,
		now:    time.Now,
	}, nil
}

// Send delivers msg to all its recipients or to none: a refused recipient
// stops the exchange before DATA, so a retry never duplicates. The error
// names the step that failed; Permanent tells whether to retry.
func (m *Mailer) Send(ctx context.Context, msg Message) error {
	rcpts, body, err := m.compose(msg)
	if err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultTimeout)
		defer cancel()
	}
	conn, err := m.dial(ctx, "tcp", net.JoinHostPort(m.server.Host, m.server.Port))
	if err != nil {
		return stepError(ctx, "connect", err)
	}
	defer conn.Close()
	// net/smtp knows no context: the deadline bounds every read and write,
	// and cancelling closes the connection under it.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	deadline, _ := ctx.Deadline()
	if err := conn.SetDeadline(deadline); err != nil {
		return stepError(ctx, "connect", err)
	}
	return m.exchange(ctx, conn, rcpts, body)
}

func (m *Mailer) exchange(ctx context.Context, conn net.Conn, rcpts []string, body []byte) error {
	if m.server.Implicit {
		tc := tls.Client(conn, m.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			return stepError(ctx, "connect", err)
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, m.server.Host)
	if err != nil {
		return stepError(ctx, "connect", err)
	}
	defer c.Close()
	if err := c.Hello("localhost"); err != nil {
		return stepError(ctx, "EHLO", err)
	}
	if !m.server.Implicit && !m.server.Plaintext {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return stepError(ctx, "starttls", errNoStartTLS)
		}
		if err := c.StartTLS(m.tls); err != nil {
			return stepError(ctx, "starttls", err)
		}
	}
	if m.server.user != "" {
		a, err := m.auth(c)
		if err == nil {
			err = c.Auth(a)
		}
		if err != nil {
			return stepError(ctx, "auth", err)
		}
	}
	if err := c.Mail(m.from.Address); err != nil {
		return stepError(ctx, "MAIL FROM", err)
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r); err != nil {
			return stepError(ctx, "RCPT TO <"+r+">", err)
		}
	}
	w, err := c.Data()
	if err == nil {
		_, err = w.Write(body)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return stepError(ctx, "DATA", err)
	}
	_ = c.Quit() // the message is accepted; a failed goodbye changes nothing
	return nil
}

// auth picks PLAIN, or LOGIN when only that is offered.
func (m *Mailer) auth(c *smtp.Client) (smtp.Auth, error) {
	ok, params := c.Extension("AUTH")
	mechs := strings.Fields(strings.ToUpper(params))
	a := &saslAuth{user: m.server.user, pass: m.server.pass, plaintextOK: m.server.Plaintext}
	switch {
	case ok && slices.Contains(mechs, "PLAIN"):
		a.mech = "PLAIN"
	case ok && slices.Contains(mechs, "LOGIN"):
		a.mech = "LOGIN"
	default:
		return nil, errors.New("the server offers neither AUTH PLAIN nor AUTH LOGIN")
	}
	return a, nil
}

// saslAuth is AUTH PLAIN or LOGIN. net/smtp has no LOGIN, and its PLAIN
// refuses plaintext to anything but localhost, which ?tls=none allows.
type saslAuth struct {
	mech, user, pass string
	plaintextOK      bool
	step             int
}

func (a *saslAuth) Start(info *smtp.ServerInfo) (string, []byte, error) {
	// A second guard: exchange only gets here over TLS or with ?tls=none.
	if !info.TLS && !a.plaintextOK {
		return "", nil, errNoStartTLS
	}
	if a.mech == "PLAIN" {
		return "PLAIN", []byte("\x00" + a.user + "\x00" + a.pass), nil
	}
	return "LOGIN", nil, nil
}

func (a *saslAuth) Next(challenge []byte, more bool) ([]byte, error) {
	if !more {
		return nil, nil
	}
	if a.mech != "LOGIN" {
		return nil, errors.New("unexpected challenge to AUTH PLAIN")
	}
	// Servers ask "Username:" then "Password:"; a few word it differently,
	// so the order decides.
	a.step++
	switch a.step {
	case 1:
		return []byte(a.user), nil
	case 2:
		return []byte(a.pass), nil
	}
	return nil, errors.New("unexpected third challenge to AUTH LOGIN")
}

// Permanent reports whether err will recur on every retry: a 5xx reply
// from the server, or a message that cannot be sent.
func Permanent(err error) bool {
	if errors.Is(err, ErrInvalidMessage) {
		return true
	}
	var reply *textproto.Error
	return errors.As(err, &reply) && reply.Code >= 500 && reply.Code <= 599
}

// stepError names the step, and the context's end when that is the cause.
func stepError(ctx context.Context, step string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("smtp %s: %w (%w)", step, cerr, err)
	}
	return fmt.Errorf("smtp %s: %w", step, err)
}

// messageID is <id@domain>; a caller's id must be plain dot-atom text.
func (m *Mailer) messageID(id string) (string, error) {
	if id == "" {
		b := make([]byte, 16)
		_, _ = rand.Read(b) // never fails (crypto/rand)
		id = hex.EncodeToString(b)
	}
	for i := 0; i < len(id); i++ {
		if !isAtext(id[i]) && (id[i] != '.' || i == 0 || i == len(id)-1 || id[i-1] == '.') {
			return "", fmt.Errorf("%w: ID %q may hold only letters, digits and !#$%%&'*+-/=?^_`{|}~.", ErrInvalidMessage, id)
		}
	}
	return "<" + id + "@" + m.domain + ">", nil
}

// isAtext is RFC 5322 atext, ASCII only.
func isAtext(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}

// compose checks msg and renders it: the envelope recipients and the
// RFC 5322 message with CRLF line endings, bodies in quoted-printable.
func (m *Mailer) compose(msg Message) (rcpts []string, body []byte, err error) {
	if len(msg.To) == 0 {
		return nil, nil, fmt.Errorf("%w: no recipients", ErrInvalidMessage)
	}
	// Line breaks are checked before parsing: in a header they would start
	// a header of the sender's choosing (Bcc:, a second body).
	if strings.ContainsAny(msg.Subject, "\r\n") {
		return nil, nil, fmt.Errorf("%w: the subject contains a line break", ErrInvalidMessage)
	}
	to := make([]string, 0, len(msg.To))
	for _, s := range msg.To {
		if strings.ContainsAny(s, "\r\n") {
			return nil, nil, fmt.Errorf("%w: recipient %q contains a line break", ErrInvalidMessage, s)
		}
		a, err := mail.ParseAddress(s)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: recipient %q: %v", ErrInvalidMessage, s, err)
		}
		rcpts = append(rcpts, a.Address)
		to = append(to, a.String())
	}
	id, err := m.messageID(msg.ID)
	if err != nil {
		return nil, nil, err
	}

	var b bytes.Buffer
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("From", m.from.String())
	header("To", strings.Join(to, ",\r\n "))
	header("Subject", encodeSubject(msg.Subject))
	header("Date", m.now().Format(time.RFC1123Z))
	header("Message-ID", id)
	header("MIME-Version", "1.0")
	if msg.HTML == "" {
		header("Content-Type", "text/plain; charset=utf-8")
		header("Content-Transfer-Encoding", "quoted-printable")
		b.WriteString("\r\n")
		if err := writeQP(&b, msg.Text); err != nil {
			return nil, nil, err
		}
		return rcpts, b.Bytes(), nil
	}
	mw := multipart.NewWriter(&b)
	header("Content-Type", mime.FormatMediaType("multipart/alternative", map[string]string{"boundary": mw.Boundary()}))
	b.WriteString("\r\n")
	for _, p := range []struct{ typ, text string }{{"text/plain", msg.Text}, {"text/html", msg.HTML}} {
		w, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {p.typ + "; charset=utf-8"},
			"Content-Transfer-Encoding": {"quoted-printable"},
		})
		if err == nil {
			err = writeQP(w, p.text)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, nil, err
	}
	return rcpts, b.Bytes(), nil
}

// encodeSubject is RFC 2047 when needed, one encoded word per folded line,
// so a long subject stays near the recommended 78 characters a line.
func encodeSubject(s string) string {
	enc := mime.QEncoding.Encode("utf-8", s)
	if enc == s {
		return s
	}
	return strings.ReplaceAll(enc, "?= =?", "?=\r\n =?")
}

// writeQP writes text in quoted-printable, line breaks as CRLF.
func writeQP(w io.Writer, text string) error {
	qp := quotedprintable.NewWriter(w)
	if _, err := io.WriteString(qp, text); err != nil {
		return err
	}
	return qp.Close()
}
