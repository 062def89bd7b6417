package security

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/cairnkv/cairn/core/storage"
)

// MaxScopesPerUser bounds the scopes one user holds grants on.
const MaxScopesPerUser = 1000

// Store keeps the grants durably, one record per user and scope under storage.TagGrant
// (key: user, scope kind, type, bucket; value: {"permissions":[names]}), and caches each
// user's grants, compiled for the check, until they change. A change reads the record
// with its revision and commits on condition that it is unchanged, again on conflict,
// so several Stores may share one storage.Store (as the nodes of a cluster share a
// replicated one); the cache follows the store's change notifications, whoever wrote.
// It is safe for concurrent use.
type Store struct {
	db storage.Store
	// mu serialises this Store's grant changes (a fast path: the commits are
	// conditional).
	mu    sync.Mutex
	cache grantCache
	// maxScopes is MaxScopesPerUser (lowered by tests).
	maxScopes int
	// unsubscribe stops the change notifications (Close).
	unsubscribe func()
}

// maxChangeAttempts bounds the attempts of a grant change whose commit conflicts.
const maxChangeAttempts = 32

// NewStore returns the grant store over db. Close stops its change notifications.
func NewStore(db storage.Store) *Store {
	s := &Store{db: db, maxScopes: MaxScopesPerUser}
	s.cache.m = map[string]*compiled{}
	s.unsubscribe = db.Subscribe(s.observe)
	return s
}

// Close stops the change notifications that keep the cache coherent (the Store must
// not be used after).
func (s *Store) Close() {
	s.unsubscribe()
}

// grantTable is the prefix of every grant key.
var grantTable = []byte{storage.TagGrant}

// observe drops the cached grants of every user whose grant a commit changed. It runs
// in the store's commit path: it compares a prefix, and decodes grant keys only.
func (s *Store) observe(changes []storage.Change) {
	for _, c := range changes {
		if !bytes.HasPrefix(c.Key, grantTable) {
			continue
		}
		if _, comps, err := storage.DecodeKey(c.Key); err == nil && len(comps) > 0 {
			s.cache.drop(string(comps[0]))
		}
	}
}

// record is the stored value of a grant.
type record struct {
	Permissions []string `json:"permissions"`
}

func grantKey(user string, sc Scope) []byte {
	return storage.KeyString(storage.TagGrant, user, sc.kind(), sc.Type, sc.Bucket)
}

func userPrefix(user string) []byte { return storage.KeyString(storage.TagGrant, user) }

// MarshalJSON writes the grant as {"any":true,...} or {"type":T[,"bucket":B]} with
// "permissions": its short names.
func (g Grant) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Scope
		Permissions []string `json:"permissions"`
	}{g.Scope, g.Permissions.Names()})
}

// Grants returns the user's grants: on any first, then by type, the type's own grant
// before its buckets', then by bucket.
func (s *Store) Grants(ctx context.Context, user string) ([]Grant, error) {
	it := s.db.IteratePrefix(userPrefix(user))
	defer it.Release()
	var out []Grant
	for it.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		g, err := decodeGrant(it.Key(), it.Value())
		if err != nil {
			return nil, err
		}
		if g.Permissions != 0 {
			out = append(out, g)
		}
	}
	if err := it.Err(); err != nil {
		return nil, fmt.Errorf("security: read the grants of %q: %w", user, err)
	}
	slices.SortFunc(out, func(a, b Grant) int {
		if a.Any != b.Any {
			if a.Any {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Bucket, b.Bucket))
	})
	return out, nil
}

// decodeGrant decodes one stored grant. Permission names it does not know (written by a
// later version) grant nothing.
func decodeGrant(key, value []byte) (Grant, error) {
	_, comps, err := storage.DecodeKey(key)
	if err != nil {
		return Grant{}, fmt.Errorf("security: grant key: %w", err)
	}
	if len(comps) != 4 {
		return Grant{}, fmt.Errorf("security: grant key %q has %d components, want 4", key, len(comps))
	}
	var g Grant
	switch kind := string(comps[1]); kind {
	case "any":
		g.Any = true
	case "type", "bucket":
		g.Type, g.Bucket = string(comps[2]), string(comps[3])
	default:
		return Grant{}, fmt.Errorf("security: grant key %q: unknown scope kind %q", key, kind)
	}
	var rec record
	if err := json.Unmarshal(value, &rec); err != nil {
		return Grant{}, fmt.Errorf("security: grant %q: %w", key, err)
	}
	for _, n := range rec.Permissions {
		if p, err := ParsePermission(n); err == nil {
			g.Permissions |= p
		}
	}
	return g, nil
}

// Grant adds perms to the user's grant on sc and returns the user's grants after it.
// Errors: ErrInvalidScope, ErrTooManyGrants, or a storage error.
func (s *Store) Grant(ctx context.Context, user string, sc Scope, perms Permission) ([]Grant, error) {
	return s.change(ctx, user, sc, func(have Permission) Permission { return have | perms })
}

// Revoke removes perms from the user's grant on sc (only there: a grant on the type or
// on any stays) and returns the user's grants after it. Revoking what was not granted
// changes nothing.
func (s *Store) Revoke(ctx context.Context, user string, sc Scope, perms Permission) ([]Grant, error) {
	return s.change(ctx, user, sc, func(have Permission) Permission { return have &^ perms })
}

// change rewrites the user's grant on sc with update, durably (synced), and drops the
// user's cached grants.
func (s *Store) change(ctx context.Context, user string, sc Scope, update func(Permission) Permission) ([]Grant, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if user == "" || len(user) > MaxNameLen {
		return nil, fmt.Errorf("%w: %q", ErrUnknownUser, user)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var grants []Grant
	changed := false
	err := storage.RetryConflicts(ctx, maxChangeAttempts, func() error {
		var err error
		grants, changed, err = s.changeOnce(ctx, user, sc, update)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("security: change the grant of %q on %s: %w", user, sc, err)
	}
	if !changed {
		return grants, nil
	}
	return s.Grants(ctx, user)
}

// changeOnce reads the user's grant on sc with its revision and commits update's
// result on condition that the grant is unchanged (a conflict wraps
// storage.ErrConflict). It reports whether it committed a change, and returns the
// user's grants as read.
func (s *Store) changeOnce(ctx context.Context, user string, sc Scope, update func(Permission) Permission) ([]Grant, bool, error) {
	key := grantKey(user, sc)
	item, err := s.db.Read(ctx, key)
	if err != nil {
		return nil, false, err
	}
	grants, err := s.Grants(ctx, user)
	if err != nil {
		return nil, false, err
	}
	var have Permission
	if item.Rev.Exists() {
		g, err := decodeGrant(key, item.Value)
		if err != nil {
			return nil, false, err
		}
		have = g.Permissions
	}
	now := update(have)
	if now == have {
		return grants, false, nil
	}
	if have == 0 && len(grants) >= s.maxScopes {
		return nil, false, fmt.Errorf("%w: a user holds grants on at most %d scopes", ErrTooManyGrants, s.maxScopes)
	}
	var b storage.Batch
	b.Require(key, item.Rev)
	if now == 0 {
		b.Delete(key)
	} else {
		v, err := json.Marshal(record{Permissions: now.Names()})
		if err != nil {
			return nil, false, err
		}
		b.Put(key, v)
	}
	return grants, true, s.db.Commit(ctx, &b, true)
}

// Allowed reports whether the user holds perm (every permission in it) on sc through a
// grant on any, on sc's type, or on sc's bucket. A check on any needs a grant on any; a
// check on a type ignores the grants on its buckets.
func (s *Store) Allowed(ctx context.Context, user string, perm Permission, sc Scope) (bool, error) {
	c, err := s.compiled(ctx, user)
	if err != nil {
		return false, err
	}
	return c.allows(perm, sc), nil
}

// compiled returns the user's grants compiled, from the cache or the store.
func (s *Store) compiled(ctx context.Context, user string) (*compiled, error) {
	c, gen := s.cache.get(user)
	if c != nil {
		return c, nil
	}
	grants, err := s.Grants(ctx, user)
	if err != nil {
		return nil, err
	}
	c = compile(grants)
	s.cache.fill(user, c, gen)
	return c, nil
}

// compiled is one user's grants, indexed for the check.
type compiled struct {
	any     Permission
	types   map[string]Permission
	buckets map[[2]string]Permission
	scopes  int
}

func compile(grants []Grant) *compiled {
	c := &compiled{scopes: len(grants)}
	for _, g := range grants {
		switch g.kind() {
		case "any":
			c.any |= g.Permissions
		case "type":
			if c.types == nil {
				c.types = map[string]Permission{}
			}
			c.types[g.Type] |= g.Permissions
		default:
			if c.buckets == nil {
				c.buckets = map[[2]string]Permission{}
			}
			c.buckets[[2]string{g.Type, g.Bucket}] |= g.Permissions
		}
	}
	return c
}

func (c *compiled) allows(perm Permission, sc Scope) bool {
	have := c.any
	if !sc.Any {
		have |= c.types[sc.Type]
		if sc.Bucket != "" {
			have |= c.buckets[[2]string{sc.Type, sc.Bucket}]
		}
	}
	return perm != 0 && have&perm == perm
}

// maxCachedScopes bounds the grants the cache holds (summed over its users); past it
// the cache starts over.
const maxCachedScopes = 1 << 16

// grantCache keeps compiled grants by user. A reader that misses takes the generation
// before it reads the store and fills only if no change has dropped anything since, so
// grants read before a change can never outlive the change's drop (the same scheme as
// the S3 user cache).
type grantCache struct {
	mu     sync.RWMutex // guards m, gen and scopes
	m      map[string]*compiled
	gen    uint64 // incremented by every drop
	scopes int    // the scopes of the cached entries
}

func (c *grantCache) get(user string) (*compiled, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.m[user], c.gen
}

func (c *grantCache) fill(user string, v *compiled, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.scopes+v.scopes > maxCachedScopes || len(c.m) >= maxCachedScopes {
		clear(c.m)
		c.scopes = 0
	}
	if old := c.m[user]; old != nil {
		c.scopes -= old.scopes
	}
	c.m[user] = v
	c.scopes += v.scopes
}

func (c *grantCache) drop(user string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if old := c.m[user]; old != nil {
		c.scopes -= old.scopes
		delete(c.m, user)
	}
}
