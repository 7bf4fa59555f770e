package app

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"image/png"
	"strconv"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/hotp"
	"github.com/pquerna/otp/totp"

	"github.com/tocsin/tocsin/internal/account"
	"github.com/tocsin/tocsin/internal/errs"
	"github.com/tocsin/tocsin/internal/secrets"
	"github.com/tocsin/tocsin/internal/store"
)

// Two-factor sign-in is TOTP (RFC 6238: six digits, 30 seconds, SHA-1, the
// parameters every authenticator app knows), with ten single-use recovery
// codes for a lost phone. The secret is sealed with the server's keyring,
// bound to its person. While it is being set up it lives nowhere but in
// the setup form, sealed, so an abandoned setup leaves nothing behind.

const (
	totpIssuer        = "Tocsin"
	recoveryCodeCount = 10
	// pendingTOTPLife bounds how long a setup form stays good.
	pendingTOTPLife = time.Hour
)

var totpOpts = totp.ValidateOpts{Period: 30, Skew: 1, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

func totpAAD(userID string) []byte        { return []byte("totp:" + userID) }
func pendingTOTPAAD(userID string) []byte { return []byte("totp-pending:" + userID) }

// TOTPSetup is what the setup page shows: the secret as text and as an
// otpauth:// URI and its QR code (PNG), and Pending, the sealed secret the
// form sends back with the first code.
type TOTPSetup struct {
	Secret  string
	URI     string
	QRCode  []byte
	Pending string
}

// BeginTOTP makes a new secret for the person to scan.
func (a *App) BeginTOTP(ctx context.Context, ws WebSession) (TOTPSetup, error) {
	if len(ws.User.TOTPSecret) > 0 {
		return TOTPSetup{}, &errs.Error{Kind: errs.KindConflict, Message: "Two-factor sign-in is already on."}
	}
	key, err := totp.Generate(totp.GenerateOpts{Issuer: totpIssuer, AccountName: ws.User.Email})
	if err != nil {
		return TOTPSetup{}, err
	}
	img, err := key.Image(240, 240)
	if err != nil {
		return TOTPSetup{}, err
	}
	var qr bytes.Buffer
	if err := png.Encode(&qr, img); err != nil {
		return TOTPSetup{}, err
	}
	until := a.now().Add(pendingTOTPLife).Unix()
	sealed, err := a.keys.Seal([]byte(key.Secret()+"|"+strconv.FormatInt(until, 10)), pendingTOTPAAD(ws.User.ID))
	if err != nil {
		return TOTPSetup{}, err
	}
	return TOTPSetup{Secret: key.Secret(), URI: key.URL(), QRCode: qr.Bytes(),
		Pending: base64.RawURLEncoding.EncodeToString(sealed)}, nil
}

// ConfirmTOTP turns two-factor sign-in on once the person proves their app
// makes the right codes. It returns the recovery codes, shown once.
func (a *App) ConfirmTOTP(ctx context.Context, ws WebSession, pending, code string) ([]string, error) {
	if len(ws.User.TOTPSecret) > 0 {
		return nil, &errs.Error{Kind: errs.KindConflict, Message: "Two-factor sign-in is already on."}
	}
	expired := &errs.Error{Kind: errs.KindInvalid, Message: "This setup has expired. Start again.",
		Fields: []errs.FieldError{{Pointer: "/code", Message: "belongs to an expired setup"}}}
	raw, err := base64.RawURLEncoding.DecodeString(pending)
	if err != nil || len(pending) > 512 {
		return nil, expired
	}
	plain, err := a.keys.Open(raw, pendingTOTPAAD(ws.User.ID))
	if err != nil {
		return nil, expired
	}
	secret, untilText, _ := strings.Cut(string(plain), "|")
	if until, err := strconv.ParseInt(untilText, 10, 64); err != nil || a.now().Unix() > until {
		return nil, expired
	}
	step, ok := totpStep(normalizeCode(code), secret, a.now())
	if !ok {
		return nil, &errs.Error{Kind: errs.KindInvalid, Message: "That code is not right.",
			Fields: []errs.FieldError{{Pointer: "/code", Message: "does not match; type the code your app shows now"}}}
	}
	sealed, err := a.keys.Seal([]byte(secret), totpAAD(ws.User.ID))
	if err != nil {
		return nil, err
	}
	codes, hashes := newRecoveryCodes()
	// The confirming code is used up: it cannot sign in as well.
	if err := a.store.EnableTOTP(ctx, ws.User.ID, sealed, a.now(), step, hashes); err != nil {
		return nil, err
	}
	return codes, nil
}

// DisableTOTP turns two-factor sign-in off, on the person's password.
func (a *App) DisableTOTP(ctx context.Context, ws WebSession, password, addr string) error {
	if retry, err := a.limitSignIn(ctx, "password|"+ws.User.ID, "addr|"+addr); err != nil {
		return err
	} else if retry > 0 {
		return &errs.Error{Kind: errs.KindRateLimited, Message: "Too many attempts. Try again in " + roundUp(retry) + "."}
	}
	ok := len(password) <= MaxPasswordLen
	if ok {
		var err error
		if ok, err = secrets.VerifyPassword(ws.User.PasswordHash, password); err != nil {
			return err
		}
	}
	if !ok {
		return &errs.Error{Kind: errs.KindInvalid, Message: "Two-factor sign-in is still on.",
			Fields: []errs.FieldError{{Pointer: "/password", Message: "is not your current password"}}}
	}
	return a.store.DisableTOTP(ctx, ws.User.ID)
}

// TwoFactorStatus says whether two-factor sign-in is on, since when, and
// how many recovery codes are left.
type TwoFactorStatus struct {
	On            bool
	Since         time.Time
	RecoveryCodes int
}

func (a *App) TwoFactor(ctx context.Context, ws WebSession) (TwoFactorStatus, error) {
	if len(ws.User.TOTPSecret) == 0 {
		return TwoFactorStatus{}, nil
	}
	n, err := a.store.RecoveryCodesLeft(ctx, ws.User.ID)
	return TwoFactorStatus{On: true, Since: ws.User.TOTPEnabledAt, RecoveryCodes: n}, err
}

// secondFactor is a code that passed its check, to be used up in the
// transaction that finishes signing in: a TOTP time step, or the hash of
// a recovery code.
type secondFactor struct {
	step     int64
	recovery []byte
}

// checkSecondFactor checks a TOTP code or a recovery code, without using
// it up (useSecondFactor does).
func (a *App) checkSecondFactor(u account.User, code string) (secondFactor, bool, error) {
	code = normalizeCode(code)
	switch len(code) {
	case 6:
		secret, err := a.keys.Open(u.TOTPSecret, totpAAD(u.ID))
		if err != nil {
			return secondFactor{}, false, err
		}
		step, ok := totpStep(code, string(secret), a.now())
		return secondFactor{step: step}, ok, nil
	case 10:
		sum := sha256.Sum256([]byte(code))
		return secondFactor{recovery: sum[:]}, true, nil
	}
	return secondFactor{}, false, nil
}

// useSecondFactor uses f up: a TOTP step must be later than the last one
// used (RFC 6238 §5.2: each step's code works once), a recovery code
// unused. used is false when it was not.
func (a *App) useSecondFactor(ctx context.Context, tx *store.Tx, userID string, f secondFactor) (used bool, err error) {
	if f.recovery != nil {
		return tx.UseRecoveryCode(ctx, userID, f.recovery, a.now())
	}
	return tx.UseTOTPStep(ctx, userID, f.step)
}

// totpStep finds the time step whose code code is, among those accepted
// at now: the current one, and one either side for a clock that drifts.
func totpStep(code, secret string, now time.Time) (int64, bool) {
	if len(code) != 6 {
		return 0, false
	}
	opts := hotp.ValidateOpts{Digits: totpOpts.Digits, Algorithm: totpOpts.Algorithm}
	current := now.Unix() / int64(totpOpts.Period)
	steps := []int64{current}
	for i := range int64(totpOpts.Skew) {
		steps = append(steps, current+i+1, current-i-1)
	}
	for _, step := range steps {
		if ok, err := hotp.ValidateCustom(code, uint64(step), secret, opts); err == nil && ok {
			return step, true
		}
	}
	return 0, false
}

// normalizeCode drops what people type around a code: spaces and dashes,
// and case.
func normalizeCode(s string) string {
	if len(s) > 64 {
		return ""
	}
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ' || r == '-' || r == '\t':
		case r >= '0' && r <= '9', r >= 'a' && r <= 'z':
			b.WriteRune(r)
		default:
			return ""
		}
	}
	return b.String()
}

// newRecoveryCodes makes the codes (ten base32 characters, 50 bits,
// shown as "xxxxx-xxxxx") and the SHA-256 of each, which is what is
// stored.
func newRecoveryCodes() (codes []string, hashes [][]byte) {
	for range recoveryCodeCount {
		c := strings.ToLower(rand.Text()[:10])
		sum := sha256.Sum256([]byte(c))
		codes = append(codes, c[:5]+"-"+c[5:])
		hashes = append(hashes, sum[:])
	}
	return codes, hashes
}
