package monitor

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"time"
)

// Type is the kind of check a monitor runs.
type Type string

const (
	TypeHTTP Type = "http"
	TypeTCP  Type = "tcp"
	TypeDNS  Type = "dns"
	TypeTLS  Type = "tls"
)

// Types lists the monitor types in documentation order.
var Types = []Type{TypeHTTP, TypeTCP, TypeDNS, TypeTLS}

// State is a monitor's current condition (spec §3).
type State string

const (
	StatePending     State = "PENDING"
	StateUp          State = "UP"
	StateDegraded    State = "DEGRADED"
	StateDown        State = "DOWN"
	StateUnknown     State = "UNKNOWN"
	StatePaused      State = "PAUSED"
	StateMaintenance State = "MAINTENANCE"
)

// States lists every state in the spec's order.
var States = []State{StatePending, StateUp, StateDegraded, StateDown, StateUnknown, StatePaused, StateMaintenance}

// Interval bounds (DESIGN §2). The per-workspace quota may raise the minimum.
const (
	MinIntervalSeconds     = 10
	MaxIntervalSeconds     = 86400
	DefaultIntervalSeconds = 60
)

// Monitor is a configured check in a workspace.
type Monitor struct {
	ID              string
	WorkspaceID     string
	Type            Type
	Name            string
	Config          Config
	IntervalSeconds int
	State           State
	StateSince      time.Time
	Paused          bool
	CreatedAt       time.Time
	UpdatedAt       time.Time
	// Last is the latest check's summary; its At is zero before the first.
	Last LastCheck
	// SLO is the monitor's objective; nil: none.
	SLO *SLO
}

// Interval is the time between the monitor's checks.
func (m Monitor) Interval() time.Duration { return time.Duration(m.IntervalSeconds) * time.Second }

// LastCheck summarises a monitor's latest check for its API response.
type LastCheck struct {
	At         time.Time
	Result     Result
	Reason     string
	Latency    time.Duration
	StatusCode int
	// CertExpiry is when the certificate last seen by a tls check expires
	// (zero: none seen); a check that completes no handshake keeps it.
	CertExpiry time.Time
}

// Config holds the type-specific settings. Exactly the fields of the
// monitor's type are meaningful; Validate enforces that. It is persisted as
// JSON, so the tags are part of the storage format.
type Config struct {
	// http
	URL                 string             `json:"url,omitempty"`
	Method              string             `json:"method,omitempty"`
	Headers             map[string]string  `json:"-"` // values sealed separately, like Auth
	HeadersSet          []string           `json:"headersSet,omitempty"`
	Body                string             `json:"body,omitempty"`
	FollowRedirects     *bool              `json:"followRedirects,omitempty"`
	ExpectedStatusCodes []StatusRange      `json:"expectedStatusCodes,omitempty"`
	KeywordAssertions   []KeywordAssertion `json:"keywordAssertions,omitempty"`
	JSONAssertions      []JSONAssertion    `json:"jsonAssertions,omitempty"`
	DegradedLatencyMs   int                `json:"degradedLatencyMs,omitempty"`
	Auth                *Auth              `json:"-"` // sealed separately, never in the config JSON
	AuthSet             *AuthPresence      `json:"authSet,omitempty"`
	TimeoutSeconds      int                `json:"timeoutSeconds,omitempty"`

	// every type: the state machine's thresholds (DESIGN §4)
	Confirmations int `json:"confirmations,omitempty"` // consecutive downs before DOWN
	Recoveries    int `json:"recoveries,omitempty"`    // consecutive ups to leave DOWN

	// tcp, tls (host, port); dns (name)
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
	// tcp: optional exchange
	Send   string `json:"send,omitempty"`
	Expect string `json:"expect,omitempty"`

	// dns
	RecordName     string   `json:"recordName,omitempty"`
	RecordType     string   `json:"recordType,omitempty"`
	ExpectedValues []string `json:"expectedValues,omitempty"`
	Resolver       string   `json:"resolver,omitempty"`

	// tls
	ServerName         string `json:"serverName,omitempty"`
	DegradedExpiryDays int    `json:"degradedExpiryDays,omitempty"`
	DownExpiryDays     int    `json:"downExpiryDays,omitempty"`
}

// StatusRange is an inclusive range of HTTP status codes; a single code has
// From == To.
type StatusRange struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// KeywordAssertion checks that a keyword is (or is not) in the body.
type KeywordAssertion struct {
	Keyword       string `json:"keyword"`
	Present       bool   `json:"present"`
	CaseSensitive bool   `json:"caseSensitive"`
}

// Operator is a JSON assertion operator (spec §2, exactly five).
type Operator string

const (
	OpEquals   Operator = "equals"
	OpContains Operator = "contains"
	OpExists   Operator = "exists"
	OpGT       Operator = "gt"
	OpLT       Operator = "lt"
)

// Operators lists the five operators in the spec's order.
var Operators = []Operator{OpEquals, OpContains, OpExists, OpGT, OpLT}

// JSONAssertion compares the nodes a JSONPath selects with a value. Value is
// the raw JSON of the comparison value; nil when absent.
type JSONAssertion struct {
	Path     string          `json:"path"`
	Operator Operator        `json:"operator"`
	Value    json.RawMessage `json:"value,omitempty"`
}

// AuthType says how an authenticated check presents its credentials.
type AuthType string

const (
	AuthBasic  AuthType = "basic"
	AuthBearer AuthType = "bearer"
	AuthHeader AuthType = "header"
)

// Auth is the credential of an authenticated check. It is sealed at rest and
// never leaves the service.
type Auth struct {
	Type     AuthType `json:"type"`
	Username string   `json:"username,omitempty"`
	Password string   `json:"password,omitempty"`
	Token    string   `json:"token,omitempty"`
	Header   string   `json:"header,omitempty"`
	Value    string   `json:"value,omitempty"`
}

// AuthPresence is what may be shown about an Auth: its type, the
// non-secret parts, and which secret fields are set.
type AuthPresence struct {
	Type        AuthType `json:"type"`
	Username    string   `json:"username,omitempty"`
	Header      string   `json:"header,omitempty"`
	PasswordSet bool     `json:"passwordSet,omitempty"`
	TokenSet    bool     `json:"tokenSet,omitempty"`
	ValueSet    bool     `json:"valueSet,omitempty"`
}

// Presence describes a without its secrets.
func (a *Auth) Presence() *AuthPresence {
	if a == nil {
		return nil
	}
	return &AuthPresence{
		Type:        a.Type,
		Username:    a.Username,
		Header:      a.Header,
		PasswordSet: a.Password != "",
		TokenSet:    a.Token != "",
		ValueSet:    a.Value != "",
	}
}

// HeaderNames lists the names of headers, sorted: what may be shown of
// them, since their values can be credentials.
func HeaderNames(headers map[string]string) []string {
	if len(headers) == 0 {
		return nil
	}
	names := make([]string, 0, len(headers))
	for name := range headers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// HeaderPatch is an edit of a monitor's request headers. Their values are
// write-only, so an edit names only what changes and the rest is kept.
type HeaderPatch struct {
	Clear bool               // drop every stored header before Set
	Set   map[string]*string // a value sets the header, nil removes it
}

// IsZero reports whether the patch changes nothing.
func (p HeaderPatch) IsZero() bool { return !p.Clear && len(p.Set) == 0 }

// Apply returns cur as the patch leaves it, a new map (nil when empty).
// Names match case-insensitively, as HTTP's do, so "x-api-key" replaces a
// stored "X-Api-Key" instead of sending both.
func (p HeaderPatch) Apply(cur map[string]string) map[string]string {
	out := map[string]string{}
	if !p.Clear {
		maps.Copy(out, cur)
	}
	names := slices.Sorted(maps.Keys(p.Set))
	for _, name := range names {
		for stored := range out {
			if strings.EqualFold(stored, name) {
				delete(out, stored)
			}
		}
	}
	for _, name := range names {
		if v := p.Set[name]; v != nil {
			out[name] = *v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// Clone returns a copy of c that shares no maps, slices or pointers with it.
func (c Config) Clone() Config {
	out := c
	if c.Headers != nil {
		out.Headers = make(map[string]string, len(c.Headers))
		for k, v := range c.Headers {
			out.Headers[k] = v
		}
	}
	out.HeadersSet = slices.Clone(c.HeadersSet)
	if c.FollowRedirects != nil {
		v := *c.FollowRedirects
		out.FollowRedirects = &v
	}
	out.ExpectedStatusCodes = slices.Clone(c.ExpectedStatusCodes)
	out.KeywordAssertions = slices.Clone(c.KeywordAssertions)
	if c.JSONAssertions != nil {
		out.JSONAssertions = make([]JSONAssertion, len(c.JSONAssertions))
		for i, a := range c.JSONAssertions {
			a.Value = slices.Clone(a.Value)
			out.JSONAssertions[i] = a
		}
	}
	if c.Auth != nil {
		v := *c.Auth
		out.Auth = &v
	}
	if c.AuthSet != nil {
		v := *c.AuthSet
		out.AuthSet = &v
	}
	out.ExpectedValues = slices.Clone(c.ExpectedValues)
	return out
}
