package security

import (
	"context"
	"crypto/subtle"
	"fmt"
)

// Users looks up the accounts that may authenticate: core/server adapts the users of
// the object-storage service (their key id and secret, created with `cairn user`).
type Users interface {
	// User returns the secret of the user whose key id is keyID and whether the user is
	// enabled; found is false when there is no such user. Lookups are on every request's
	// path, so they should be cached.
	User(ctx context.Context, keyID string) (secret string, enabled, found bool, err error)
}

// maxSecretLen bounds the secret an authentication compares (longer ones are refused
// without a lookup).
const maxSecretLen = 1024

// Guard authenticates callers and hands out their Principal; it also manages grants,
// checking that the user exists. It is safe for concurrent use.
type Guard struct {
	users  Users
	grants *Store
	admin  func(keyID, secret string) bool
}

// NewGuard returns a guard over the users and grants; admin reports (in constant time)
// whether a key id and secret are the admin credential, which holds every permission.
func NewGuard(users Users, grants *Store, admin func(keyID, secret string) bool) *Guard {
	return &Guard{users: users, grants: grants, admin: admin}
}

// Authenticate returns the principal of keyID when secret is its secret and the user is
// enabled, or the admin principal for the admin credential. Anything else is
// ErrUnauthenticated (an unknown key id, a wrong secret and a disabled user are not
// told apart); a failed lookup is returned wrapped.
func (g *Guard) Authenticate(ctx context.Context, keyID, secret string) (*Principal, error) {
	if keyID == "" || len(keyID) > MaxNameLen || len(secret) > maxSecretLen {
		return nil, ErrUnauthenticated
	}
	if g.admin != nil && g.admin(keyID, secret) {
		return &Principal{KeyID: keyID, Admin: true, grants: g.grants}, nil
	}
	want, enabled, found, err := g.users.User(ctx, keyID)
	if err != nil {
		return nil, fmt.Errorf("security: look up user %q: %w", keyID, err)
	}
	if !found {
		want = secret // compare anyway: an unknown key id takes as long as a wrong secret
	}
	match := subtle.ConstantTimeCompare([]byte(secret), []byte(want)) == 1
	if !found || !match || !enabled {
		return nil, ErrUnauthenticated
	}
	return &Principal{KeyID: keyID, grants: g.grants}, nil
}

// Grant adds perms on sc to the grants of the user keyID, which must exist
// (ErrUnknownUser), and returns the user's grants after it.
func (g *Guard) Grant(ctx context.Context, keyID string, sc Scope, perms Permission) ([]Grant, error) {
	if keyID == "" || len(keyID) > MaxNameLen {
		return nil, fmt.Errorf("%w: %q", ErrUnknownUser, keyID)
	}
	if _, _, found, err := g.users.User(ctx, keyID); err != nil {
		return nil, fmt.Errorf("security: look up user %q: %w", keyID, err)
	} else if !found {
		return nil, fmt.Errorf("%w: %q", ErrUnknownUser, keyID)
	}
	return g.grants.Grant(ctx, keyID, sc, perms)
}

// Revoke removes perms from the user's grant on sc and returns the user's grants after
// it (the user need not exist any more).
func (g *Guard) Revoke(ctx context.Context, keyID string, sc Scope, perms Permission) ([]Grant, error) {
	return g.grants.Revoke(ctx, keyID, sc, perms)
}

// Grants returns the grants of the user keyID.
func (g *Guard) Grants(ctx context.Context, keyID string) ([]Grant, error) {
	return g.grants.Grants(ctx, keyID)
}

// Principal is an authenticated caller.
type Principal struct {
	// KeyID is the caller's access key id.
	KeyID string
	// Admin is set for the admin credential, which holds every permission.
	Admin  bool
	grants *Store
}

// Check returns nil when the principal holds perm (one permission) on sc, a
// *DeniedError when it does not, or the error of reading its grants.
func (p *Principal) Check(ctx context.Context, perm Permission, sc Scope) error {
	if p.Admin {
		return nil
	}
	ok, err := p.grants.Allowed(ctx, p.KeyID, perm, sc)
	switch {
	case err != nil:
		return err
	case !ok:
		return &DeniedError{User: p.KeyID, Permission: perm, Scope: sc}
	}
	return nil
}
