package s3

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cairnkv/cairn/core/storage"
)

// User statuses.
const (
	StatusEnabled  = "enabled"
	StatusDisabled = "disabled"
)

// User is an account of the object-storage interface: an access key pair and a canonical
// id that owns buckets and objects.
type User struct {
	// ID is the canonical user id: 64 lower-case hex digits.
	ID          string    `json:"id"`
	KeyID       string    `json:"key_id"`
	KeySecret   string    `json:"key_secret"`
	Name        string    `json:"name"`
	Email       string    `json:"email"`
	DisplayName string    `json:"display_name"`
	Status      string    `json:"status"`
	Created     time.Time `json:"created"`
}

// Owner returns the user as a bucket or object owner.
func (u *User) Owner() Owner { return Owner{ID: u.ID, DisplayName: u.DisplayName} }

// Enabled reports whether the user may sign requests.
func (u *User) Enabled() bool { return u.Status == StatusEnabled }

// User-table keys (under storage.TagS3): "u" key id → user record, "ue" e-mail → key id,
// "ui" canonical id → key id.
func userKey(keyID string) []byte { return storage.KeyString(storage.TagS3, "u", keyID) }
func emailKey(email string) []byte {
	return storage.KeyString(storage.TagS3, "ue", strings.ToLower(email))
}
func canonKey(id string) []byte { return storage.KeyString(storage.TagS3, "ui", id) }
func userPrefix() []byte        { return storage.KeyString(storage.TagS3, "u") }
func randomBytes(n int) []byte  { b := make([]byte, n); _, _ = rand.Read(b); return b }
func upperB64(b []byte) string  { return strings.ToUpper(base64.RawURLEncoding.EncodeToString(b)) }
func newSecret() string         { return base64.RawURLEncoding.EncodeToString(randomBytes(30)) }
func md5hex(b []byte) string    { s := md5.Sum(b); return hex.EncodeToString(s[:]) }
func displayNameOf(email string) string {
	if i := strings.IndexByte(email, '@'); i >= 0 {
		return email[:i]
	}
	return email
}

// NewUser is what creating a user takes.
type NewUser struct {
	Name  string
	Email string
	// KeyID and KeySecret, when set, fix the key pair (the admin's comes from the
	// configuration); otherwise a new random pair is made.
	KeyID     string
	KeySecret string
}

// maxUserField bounds a user's name and e-mail address.
const maxUserField = 256

func validEmail(e string) bool {
	at := strings.IndexByte(e, '@')
	return at > 0 && at < len(e)-1 && strings.Count(e, "@") == 1 && !strings.ContainsAny(e, " \t\r\n<>\"")
}

// CreateUser creates a user: 409 UserAlreadyExists when the e-mail address is taken, 400
// InvalidUserField for a missing name, a malformed address, or a name or display name
// (the address's local part) that reads as a reserved one (checkShownName) or an
// address in the server's own domain.
func (s *Service) CreateUser(ctx context.Context, nu NewUser) (*User, error) {
	return s.createUser(ctx, nu, false)
}

// checkUserFields checks a new or changed user name and e-mail address (either may be
// "" when it does not change) as CreateUser describes.
func checkUserFields(name, email string) error {
	if name != "" {
		if err := checkShownName("user name", name); err != nil {
			return err
		}
	}
	if email == "" {
		return nil
	}
	if err := checkShownName("display name (the e-mail address before its @)", displayNameOf(email)); err != nil {
		return err
	}
	if strings.HasSuffix(strings.ToLower(email), "@"+adminDomain) {
		return Errorf(InvalidUserField, "The e-mail domain %s is the server's own", adminDomain)
	}
	return nil
}

// createUser is CreateUser; system (the server's own administrator) may take the
// reserved names.
func (s *Service) createUser(ctx context.Context, nu NewUser, system bool) (*User, error) {
	nu.Name, nu.Email = strings.TrimSpace(nu.Name), strings.TrimSpace(nu.Email)
	switch {
	case nu.Name == "" || len(nu.Name) > maxUserField || strings.ContainsAny(nu.Name, "\r\n"):
		return nil, Errorf(InvalidUserField, "The user name must be 1 to %d characters on one line", maxUserField)
	case !validEmail(nu.Email) || len(nu.Email) > maxUserField:
		return nil, Errorf(InvalidUserField, "Invalid e-mail address %q", nu.Email)
	}
	if !system {
		if err := checkUserFields(nu.Name, nu.Email); err != nil {
			return nil, err
		}
	}
	u := &User{Name: nu.Name, Email: nu.Email, DisplayName: displayNameOf(nu.Email), Status: StatusEnabled,
		Created: time.Now().UTC().Truncate(time.Millisecond), KeyID: nu.KeyID, KeySecret: nu.KeySecret}
	if u.KeyID == "" {
		u.KeyID = upperB64(randomBytes(15))
		u.KeySecret = newSecret()
	}
	u.ID = md5hex([]byte(u.KeyID)) + md5hex(randomBytes(16))
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	// The e-mail and key id entries must be absent when the user commits: two
	// creations with one address, through any service, cannot both succeed.
	err := s.update(ctx, "create user", func(t *txn) error {
		if ok, err := exists(t, emailKey(nu.Email)); err != nil {
			return fmt.Errorf("s3: create user: %w", err)
		} else if ok {
			return &Error{Code: UserAlreadyExists, Message: "The specified email address has already been registered. Email addresses must be unique among all users of the system. Please try again with a different email address."}
		}
		if ok, err := exists(t, userKey(u.KeyID)); err != nil {
			return fmt.Errorf("s3: create user: %w", err)
		} else if ok {
			return Errorf(UserAlreadyExists, "The key id is taken")
		}
		if err := putUser(&t.b, u); err != nil {
			return err
		}
		t.b.Put(emailKey(u.Email), []byte(u.KeyID))
		t.b.Put(canonKey(u.ID), []byte(u.KeyID))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// exists reads key in t (requiring it unchanged) and reports whether it is present.
func exists(t *txn, key []byte) (bool, error) {
	_, err := t.get(key)
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// userIn reads the user keyID in t (NoSuchUser if none), from the store.
func userIn(t *txn, keyID string) (*User, error) {
	v, err := t.get(userKey(keyID))
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, Errorf(NoSuchUser, "The specified user does not exist")
		}
		return nil, fmt.Errorf("s3: read user: %w", err)
	}
	u := new(User)
	if err := json.Unmarshal(v, u); err != nil {
		return nil, fmt.Errorf("s3: decode user %s: %w", keyID, err)
	}
	return u, nil
}

func putUser(b *storage.Batch, u *User) error {
	v, err := json.Marshal(u)
	if err != nil {
		return fmt.Errorf("s3: encode user: %w", err)
	}
	b.Put(userKey(u.KeyID), v)
	return nil
}

// testHookUserRead, set by tests, runs in UserByKey between reading a user from the
// store and caching it: where an update may overtake a reader.
var testHookUserRead func()

// UserByKey returns the user whose access key id is keyID (NoSuchUser if none).
func (s *Service) UserByKey(ctx context.Context, keyID string) (*User, error) {
	u, gen := s.users.get(keyID)
	if u != nil {
		return u, nil
	}
	v, err := s.db.Get(userKey(keyID))
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, Errorf(NoSuchUser, "The specified user does not exist")
		}
		return nil, fmt.Errorf("s3: read user: %w", err)
	}
	u = new(User)
	if err := json.Unmarshal(v, u); err != nil {
		return nil, fmt.Errorf("s3: decode user %s: %w", keyID, err)
	}
	if testHookUserRead != nil {
		testHookUserRead()
	}
	s.users.fill(u, gen)
	return u, nil
}

// UserByID returns the user with the canonical id (NoSuchUser if none).
func (s *Service) UserByID(ctx context.Context, id string) (*User, error) {
	k, err := s.db.Get(canonKey(id))
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, Errorf(NoSuchUser, "The specified user does not exist")
		}
		return nil, fmt.Errorf("s3: read user: %w", err)
	}
	return s.UserByKey(ctx, string(k))
}

// UserByEmail returns the user with the e-mail address (NoSuchUser if none).
func (s *Service) UserByEmail(ctx context.Context, email string) (*User, error) {
	k, err := s.db.Get(emailKey(email))
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return nil, Errorf(NoSuchUser, "The specified user does not exist")
		}
		return nil, fmt.Errorf("s3: read user: %w", err)
	}
	return s.UserByKey(ctx, string(k))
}

// Users lists the users in key-id order; status "" lists all, otherwise only those
// with that status.
func (s *Service) Users(ctx context.Context, status string) ([]*User, error) {
	it := s.db.IteratePrefix(userPrefix())
	defer it.Release()
	var out []*User
	for it.Next() {
		u := new(User)
		if err := json.Unmarshal(it.Value(), u); err != nil {
			return nil, fmt.Errorf("s3: decode user: %w", err)
		}
		if status == "" || u.Status == status {
			out = append(out, u)
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("s3: list users: %w", err)
	}
	return out, nil
}

// UserUpdate is a change to a user; nil fields stay as they are.
type UserUpdate struct {
	Name         *string
	Email        *string
	Status       *string
	NewKeySecret bool
}

// UpdateUser applies up to the user with keyID and returns the new record. Only the
// admin may re-enable a disabled user (byAdmin).
func (s *Service) UpdateUser(ctx context.Context, keyID string, up UserUpdate, byAdmin bool) (*User, error) {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	var u *User
	err := s.update(ctx, "update user", func(t *txn) error {
		old, err := userIn(t, keyID)
		if err != nil {
			return err
		}
		u, err = applyUserUpdate(t, old, up, byAdmin)
		return err
	})
	if err != nil {
		return nil, err
	}
	return u, nil
}

// applyUserUpdate adds to t the writes of up applied to the user old, and returns the
// new record. A new e-mail address must be free (and stay so until the commit).
func applyUserUpdate(t *txn, old *User, up UserUpdate, byAdmin bool) (*User, error) {
	u := *old
	if up.Name != nil {
		n := strings.TrimSpace(*up.Name)
		if n == "" || len(n) > maxUserField || strings.ContainsAny(n, "\r\n") {
			return nil, Errorf(InvalidUserField, "The user name must be 1 to %d characters on one line", maxUserField)
		}
		if n != u.Name {
			if err := checkUserFields(n, ""); err != nil {
				return nil, err
			}
		}
		u.Name = n
	}
	if up.Email != nil && !strings.EqualFold(strings.TrimSpace(*up.Email), u.Email) {
		e := strings.TrimSpace(*up.Email)
		if !validEmail(e) || len(e) > maxUserField {
			return nil, Errorf(InvalidUserField, "Invalid e-mail address %q", e)
		}
		if err := checkUserFields("", e); err != nil {
			return nil, err
		}
		if ok, err := exists(t, emailKey(e)); err != nil {
			return nil, fmt.Errorf("s3: update user: %w", err)
		} else if ok {
			return nil, &Error{Code: UserAlreadyExists, Message: "The specified email address has already been registered."}
		}
		t.b.Delete(emailKey(u.Email))
		t.b.Put(emailKey(e), []byte(u.KeyID))
		u.Email, u.DisplayName = e, displayNameOf(e)
	}
	if up.Status != nil {
		switch *up.Status {
		case StatusEnabled:
			if u.Status != StatusEnabled && !byAdmin {
				return nil, &Error{Code: AccessDenied, Message: "Only the administrator may enable a user"}
			}
		case StatusDisabled:
		default:
			return nil, Errorf(InvalidUserField, "status must be enabled or disabled, not %q", *up.Status)
		}
		u.Status = *up.Status
	}
	if up.NewKeySecret {
		u.KeySecret = newSecret()
	}
	if err := putUser(&t.b, &u); err != nil {
		return nil, err
	}
	return &u, nil
}

// EnsureAdmin makes sure the administrator (the user whose key pair is the server's
// admin credential) exists and has that secret, creating it at first start.
func (s *Service) EnsureAdmin(ctx context.Context, keyID, secret string) (*User, error) {
	u, err := s.UserByKey(ctx, keyID)
	switch {
	case err == nil:
		if u.KeySecret != secret || !u.Enabled() {
			if u, err = s.resetAdmin(ctx, keyID, secret); err != nil {
				return nil, err
			}
		}
	case IsCode(err, NoSuchUser):
		u, err = s.createUser(ctx, NewUser{Name: "admin", Email: "admin@" + adminDomain, KeyID: keyID, KeySecret: secret}, true)
		if IsCode(err, UserAlreadyExists) {
			// An earlier admin credential's user has the address.
			u, err = s.createUser(ctx, NewUser{Name: "admin", Email: "admin-" + strings.ToLower(keyID) + "@" + adminDomain, KeyID: keyID, KeySecret: secret}, true)
		}
		if err != nil {
			return nil, fmt.Errorf("s3: create admin: %w", err)
		}
	default:
		return nil, err
	}
	s.adminKey = keyID
	return u, nil
}

// resetAdmin gives the admin user keyID the secret and enables it. It re-reads the
// record and commits on condition that it is unchanged, so that it cannot undo an
// update made meanwhile.
func (s *Service) resetAdmin(ctx context.Context, keyID, secret string) (*User, error) {
	s.usersMu.Lock()
	defer s.usersMu.Unlock()
	var nu User
	err := s.update(ctx, "update admin", func(t *txn) error {
		u, err := userIn(t, keyID)
		if err != nil {
			return err
		}
		nu = *u
		nu.KeySecret, nu.Status = secret, StatusEnabled
		return putUser(&t.b, &nu)
	})
	if err != nil {
		return nil, err
	}
	return &nu, nil
}

// adminDomain is the domain of the admin user's e-mail address.
const adminDomain = "cairn.local"

// IsAdmin reports whether u is the administrator.
func (s *Service) IsAdmin(u *User) bool { return u != nil && s.adminKey != "" && u.KeyID == s.adminKey }
