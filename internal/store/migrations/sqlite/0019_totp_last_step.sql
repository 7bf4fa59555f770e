-- The last TOTP time step (RFC 6238: unix time / 30 s) that signed a
-- person in or confirmed their authenticator: a code is accepted only for
-- a later step, so each step's code works once (RFC 6238 §5.2). NULL: none
-- used yet.
ALTER TABLE users ADD COLUMN totp_last_step INTEGER;
