package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/monitor"
	"github.com/tocsin/tocsin/internal/store"
)

// A monitor's request headers can carry credentials (Authorization,
// X-Api-Key…), so their values are kept like its auth: sealed at rest,
// opened in memory for a check, never shown. The config keeps their names.

// headersAAD binds sealed header values to their monitor, apart from its
// credential, so neither ciphertext opens in the other's place.
func headersAAD(monitorID string) []byte { return []byte("monitor-headers:" + monitorID) }

// sealHeaders seals a monitor's request headers: their values may be
// credentials (Authorization, X-Api-Key…), so they are kept like auth.
func (a *App) sealHeaders(monitorID string, headers map[string]string) ([]byte, error) {
	if len(headers) == 0 {
		return nil, nil
	}
	plain, err := json.Marshal(headers)
	if err != nil {
		return nil, err
	}
	return a.keys.Seal(plain, headersAAD(monitorID))
}

// MonitorHeaders decrypts a monitor's request headers, in memory.
func (a *App) MonitorHeaders(ctx context.Context, wsID, monitorID string) (map[string]string, error) {
	sealed, err := a.store.MonitorHeaders(ctx, wsID, monitorID)
	if err != nil || sealed == nil {
		return nil, err
	}
	return a.OpenMonitorHeaders(monitorID, sealed)
}

// OpenMonitorHeaders decrypts a monitor's sealed request headers, in
// memory, for the check that is about to run.
func (a *App) OpenMonitorHeaders(monitorID string, sealed []byte) (map[string]string, error) {
	plain, err := a.keys.Open(sealed, headersAAD(monitorID))
	if err != nil {
		return nil, fmt.Errorf("monitor %s headers: %w", monitorID, err)
	}
	var headers map[string]string
	if err := json.Unmarshal(plain, &headers); err != nil {
		return nil, fmt.Errorf("monitor %s headers: %w", monitorID, err)
	}
	return headers, nil
}

// keptHeaders stands in for stored headers that an update keeps: their
// names, with a value that passes validation and is never stored.
func keptHeaders(names []string) map[string]string {
	if len(names) == 0 {
		return nil
	}
	h := make(map[string]string, len(names))
	for _, name := range names {
		h[name] = "kept"
	}
	return h
}

// sealBatch bounds each transaction of SealPlaintextHeaders.
const sealBatch = 100

// SealPlaintextHeaders seals the header values that versions before
// headers_sealed kept in plaintext in a monitor's config, and takes them
// out of it: the migration step SQL cannot do, since it needs the keyring.
// serve and migrate run it after the SQL migrations. It is idempotent and
// safe on several nodes at once, writes at most sealBatch monitors per
// transaction, and returns how many it sealed. Without a keyring it fails
// only when there is something to seal.
func (a *App) SealPlaintextHeaders(ctx context.Context) (sealed int, err error) {
	defer errs.Wrap(&err, "app.SealPlaintextHeaders")
	after := ""
	for {
		rows, err := a.store.PlainHeaderConfigs(ctx, after, sealBatch)
		if err != nil || len(rows) == 0 {
			return sealed, err
		}
		after = rows[len(rows)-1].ID
		var batch []store.HeadersSealing
		for _, r := range rows {
			s, ok, err := a.sealPlain(r)
			if err != nil {
				return sealed, err
			}
			if ok {
				batch = append(batch, s)
			}
		}
		if len(batch) == 0 {
			continue
		}
		n, err := a.store.SealPlainHeaders(ctx, batch)
		if err != nil {
			return sealed, err
		}
		sealed += n
	}
}

// sealPlain works out the sealing of one monitor's plaintext headers; ok
// is false when its config has no "headers" key after all (the store's
// filter is textual) or cannot be read, which is logged and left alone so
// that one bad row stops no other.
func (a *App) sealPlain(p store.PlainHeaders) (s store.HeadersSealing, ok bool, err error) {
	var top map[string]json.RawMessage
	var cfg monitor.Config
	if err := errors.Join(json.Unmarshal([]byte(p.Config), &top), json.Unmarshal([]byte(p.Config), &cfg)); err != nil {
		a.log.Warn("a monitor's config cannot be read; its plaintext headers are left as they are", "monitor", p.ID, "err", err)
		return s, false, nil
	}
	raw, found := top["headers"]
	if !found {
		return s, false, nil
	}
	var plain map[string]string
	if err := json.Unmarshal(raw, &plain); err != nil {
		a.log.Warn("a monitor's plaintext headers are not name-value pairs; left as they are", "monitor", p.ID)
		return s, false, nil
	}
	if a.keys == nil {
		return s, false, errors.New("header values stored in plaintext need the keyring to be sealed: set the secret keys the server uses")
	}
	var headers map[string]string
	if p.SealedHeaders != nil {
		if headers, err = a.OpenMonitorHeaders(p.ID, p.SealedHeaders); err != nil {
			return s, false, err
		}
	}
	// A plaintext value was written after the sealed ones (by an older node
	// on the same database), so it wins.
	set := make(map[string]*string, len(plain))
	for name, v := range plain {
		set[name] = &v
	}
	headers = monitor.HeaderPatch{Set: set}.Apply(headers)
	cfg.HeadersSet = monitor.HeaderNames(headers)
	text, err := json.Marshal(cfg)
	if err != nil {
		return s, false, err
	}
	s = store.HeadersSealing{ID: p.ID, Was: p.Config, Config: string(text)}
	if s.Sealed, err = a.sealHeaders(p.ID, headers); err != nil {
		return s, false, err
	}
	return s, true, nil
}
