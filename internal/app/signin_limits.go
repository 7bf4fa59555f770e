package app

import (
	"context"
	"time"
)

// How sign-in attempts are limited. OWASP's guidance on lockout is the
// model: count failures against the account, so that guessing at it from
// many addresses is bounded, but never let that count keep the account's
// owner out.
//
//   - Per client address, every attempt, before anything else (so before
//     the password hash): guessing, and spraying one password over many
//     accounts, stay bounded per address.
//   - Per account, failures only, keyed by a hash of the e-mail as typed,
//     known or not, so the limits tell nobody who has an account.
//   - Per account and address, failures only: the address's own record
//     at this account.
//
// While the account's bucket has room, any address may try. Once it is
// spent (someone is guessing), an attempt is let through only from an
// address with room in its own bucket at this account: the owner, from an
// address that has not failed there lately, still signs in with the right
// password, while the guesser's address is refused before any hash is
// computed. A wrong password from such an address charges that address.
//
// Every bucket is charged before the password is checked and given back
// when it was right: concurrent attempts cannot overrun a bucket, and only
// failures count. The buckets are the database's on PostgreSQL, so every
// node knows which addresses failed; in memory on SQLite's one node.
// Unknown e-mails and wrong passwords take the same steps.

// bucketRule is a GCRA bucket's shape: a burst, then one every interval.
type bucketRule struct {
	burst int
	every time.Duration
}

var (
	signInAddr    = bucketRule{30, 6 * time.Second}
	signInAccount = bucketRule{10, 30 * time.Second}
	signInPair    = bucketRule{5, 15 * time.Minute}
)

// takeAttempt takes one attempt from bucket. When refused, wait is how
// long until one fits.
func (a *App) takeAttempt(ctx context.Context, bucket string, r bucketRule) (ok bool, wait time.Duration, err error) {
	now := a.now()
	d, err := a.rates.take(ctx, bucket, now, r.every, r.every*time.Duration(r.burst))
	if err != nil || d.Allowed {
		return d.Allowed, 0, err
	}
	return false, max(d.TAT.Sub(now)-r.every*time.Duration(r.burst-1), time.Second), nil
}

// signInCharge is what one sign-in attempt took from the account's
// buckets, to be kept when the password was wrong or given back when it
// was right.
type signInCharge struct {
	bucket string
	rule   bucketRule
	pair   string // the (account, address) bucket
}

// admitSignIn decides whether an attempt at the account (a hash of the
// e-mail) from addr may check its password. A positive wait refuses it.
func (a *App) admitSignIn(ctx context.Context, account, addr string) (signInCharge, time.Duration, error) {
	ok, wait, err := a.takeAttempt(ctx, "signin|addr|"+addr, signInAddr)
	if err != nil || !ok {
		return signInCharge{}, wait, err
	}
	c := signInCharge{bucket: "signin|account|" + account, rule: signInAccount, pair: "signin|account|" + account + "|addr|" + addr}
	ok, waitAccount, err := a.takeAttempt(ctx, c.bucket, c.rule)
	if err != nil || ok {
		return c, 0, err
	}
	ok, waitPair, err := a.takeAttempt(ctx, c.pair, signInPair)
	if err != nil || !ok {
		return signInCharge{}, min(waitAccount, waitPair), err
	}
	c.bucket, c.rule = c.pair, signInPair
	return c, 0, nil
}

// failed keeps the charge of a wrong password and notes it against the
// address too (when the account's bucket paid for it).
func (a *App) failed(ctx context.Context, c signInCharge) error {
	if c.bucket == c.pair {
		return nil
	}
	_, _, err := a.takeAttempt(ctx, c.pair, signInPair)
	return err
}

// succeeded gives back what a right password was charged.
func (a *App) succeeded(ctx context.Context, c signInCharge) error {
	return a.rates.give(ctx, c.bucket, c.rule.every)
}

// limitSignIn takes one attempt from each of two buckets, a person's or
// a form's (keyed by the person's id, or the address for sign-up) and the
// address's ("addr|" and the address); a positive duration is how long to
// wait when one is empty. It limits the steps that only someone past the
// password or signed in can take (the second factor, checking the
// password to change it or turn two-factor sign-in off) and signing up.
func (a *App) limitSignIn(ctx context.Context, firstBucket, addrBucket string) (time.Duration, error) {
	for _, b := range []struct {
		name string
		rule bucketRule
	}{{"signin|" + firstBucket, signInAccount}, {"signin|" + addrBucket, signInAddr}} {
		ok, wait, err := a.takeAttempt(ctx, b.name, b.rule)
		if err != nil || !ok {
			return wait, err
		}
	}
	return 0, nil
}
