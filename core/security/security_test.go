package security

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cairnkv/cairn/core/storage"
)

func openStore(t *testing.T) (*Store, *storage.DB) {
	t.Helper()
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return NewStore(db), db
}

func TestParsePermissions(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		want    Permission
		wantErr bool
	}{
		{[]string{"get"}, Get, false},
		{[]string{"riak_kv.get,riak_kv.put"}, Get | Put, false},
		{[]string{"GET", " delete "}, Get | Delete, false},
		{[]string{"list_keys,list_buckets,mapreduce,index"}, ListKeys | ListBuckets | MapReduce | Index, false},
		{[]string{"set_props", "riak_core.set_bucket"}, SetProps, false},
		{[]string{"admin"}, Admin, false},
		{[]string{"cairn.admin"}, Admin, false},
		{[]string{"get,,put,"}, Get | Put, false},
		{[]string{"riak_core.get_bucket"}, 0, true}, // Riak has it; Cairn reads props with get
		{[]string{"all"}, 0, true},
		{[]string{""}, 0, true},
		{nil, 0, true},
	} {
		got, err := ParsePermissions(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParsePermissions(%q) = %v, %v; want %v (error %v)", tc.in, got, err, tc.want, tc.wantErr)
		}
		if err != nil && !errors.Is(err, ErrUnknownPermission) {
			t.Errorf("ParsePermissions(%q): %v is not ErrUnknownPermission", tc.in, err)
		}
	}
	// Every permission round-trips through both of its names.
	for _, p := range Permissions() {
		for _, name := range []string{p.String(), p.RiakName()} {
			if got, err := ParsePermission(name); err != nil || got != p {
				t.Errorf("ParsePermission(%q) = %v, %v; want %v", name, got, err, p)
			}
		}
	}
	if got := AllPermissions.String(); got != "get,put,delete,list_keys,list_buckets,mapreduce,index,set_props,admin" {
		t.Errorf("AllPermissions = %s", got)
	}
}

func TestScopeValidate(t *testing.T) {
	long := strings.Repeat("x", MaxNameLen+1)
	for _, tc := range []struct {
		sc Scope
		ok bool
	}{
		{AnyScope(), true},
		{TypeScope("default"), true},
		{BucketScope("default", "b"), true},
		{BucketScope("t", "\x00binary\xff"), true},
		{Scope{}, false},
		{Scope{Bucket: "b"}, false},
		{Scope{Any: true, Type: "default"}, false},
		{TypeScope(long), false},
		{BucketScope("default", long), false},
	} {
		err := tc.sc.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%+v.Validate() = %v, want ok=%v", tc.sc, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidScope) {
			t.Errorf("%+v.Validate() = %v, not ErrInvalidScope", tc.sc, err)
		}
	}
}

// TestDeniedMessage checks Riak's refusal text, the scope printed as Erlang's ~p prints
// it.
func TestDeniedMessage(t *testing.T) {
	for _, tc := range []struct {
		e    DeniedError
		want string
	}{
		{DeniedError{"AKID", Get, BucketScope("default", "hello")},
			`Permission denied: User 'AKID' does not have 'riak_kv.get' on {<<"default">>,<<"hello">>}`},
		{DeniedError{"AKID", ListBuckets, TypeScope("maps")},
			`Permission denied: User 'AKID' does not have 'riak_kv.list_buckets' on <<"maps">>`},
		{DeniedError{"AKID", Admin, AnyScope()},
			`Permission denied: User 'AKID' does not have 'cairn.admin' on ANY`},
		{DeniedError{"AKID", SetProps, BucketScope("default", `a"b\c`)},
			`Permission denied: User 'AKID' does not have 'riak_core.set_bucket' on {<<"default">>,<<"a\"b\\c">>}`},
		{DeniedError{"AKID", Put, BucketScope("default", "é\x00")},
			`Permission denied: User 'AKID' does not have 'riak_kv.put' on {<<"default">>,<<195,169,0>>}`},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
	long := (&DeniedError{"u", Get, BucketScope("default", strings.Repeat("b", 1<<20))}).Error()
	if len(long) > 2*maxRendered || !strings.HasSuffix(long, `,...>>}`) {
		t.Errorf("a 1 MiB bucket name is echoed in %d bytes: ...%s", len(long), long[len(long)-20:])
	}
}

// TestStoreCheck is the check's table: a type grant covers its buckets, a bucket grant
// does not leak to other buckets or types, any covers everything, and a check on a type
// (listing its buckets) ignores grants on its buckets.
func TestStoreCheck(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	for _, g := range []struct {
		user string
		sc   Scope
		p    Permission
	}{
		{"typed", TypeScope("t1"), Get | ListBuckets},
		{"bucket", BucketScope("t1", "b1"), Get | Put},
		{"bucket", BucketScope("t1", "b1"), ListBuckets}, // on a bucket it never opens the type
		{"any", AnyScope(), MapReduce},
		{"mixed", AnyScope(), Get},
		{"mixed", TypeScope("t2"), Put},
		{"mixed", BucketScope("t3", "b"), Delete},
	} {
		if _, err := st.Grant(ctx, g.user, g.sc, g.p); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		user string
		p    Permission
		sc   Scope
		want bool
	}{
		{"typed", Get, BucketScope("t1", "b1"), true},
		{"typed", Get, BucketScope("t1", "other"), true},
		{"typed", Get, TypeScope("t1"), true},
		{"typed", Get, BucketScope("t2", "b1"), false},
		{"typed", Put, BucketScope("t1", "b1"), false},
		{"typed", Get, AnyScope(), false},
		{"typed", ListBuckets, TypeScope("t1"), true},
		{"bucket", Get, BucketScope("t1", "b1"), true},
		{"bucket", Put, BucketScope("t1", "b1"), true},
		{"bucket", Get, BucketScope("t1", "b2"), false},
		{"bucket", Get, BucketScope("t2", "b1"), false},
		{"bucket", Get, BucketScope("t1", "b1x"), false},
		{"bucket", Get, BucketScope("t1x", "b1"), false},
		{"bucket", Get, TypeScope("t1"), false},
		{"bucket", ListBuckets, TypeScope("t1"), false},
		{"bucket", Delete, BucketScope("t1", "b1"), false},
		{"any", MapReduce, BucketScope("x", "y"), true},
		{"any", MapReduce, TypeScope("x"), true},
		{"any", MapReduce, AnyScope(), true},
		{"any", Get, BucketScope("x", "y"), false},
		{"mixed", Get, BucketScope("t9", "b"), true},
		{"mixed", Put, BucketScope("t2", "b"), true},
		{"mixed", Put, BucketScope("t3", "b"), false},
		{"mixed", Delete, BucketScope("t3", "b"), true},
		{"mixed", Delete, BucketScope("t3", "c"), false},
		{"mixed", Get | Put, BucketScope("t2", "b"), true},
		{"mixed", Get | Delete, BucketScope("t2", "b"), false},
		{"nobody", Get, BucketScope("t1", "b1"), false},
		{"typed", 0, BucketScope("t1", "b1"), false},
	} {
		got, err := st.Allowed(ctx, tc.user, tc.p, tc.sc)
		if err != nil || got != tc.want {
			t.Errorf("Allowed(%s, %s, %s) = %v, %v; want %v", tc.user, tc.p, tc.sc, got, err, tc.want)
		}
	}
}

// TestStoreGrantRevoke checks the stored grants: merged per scope, revoked per scope
// only, listed in order, durable across a reopen, and the cache dropped on each change.
func TestStoreGrantRevoke(t *testing.T) {
	ctx := context.Background()
	st, db := openStore(t)
	bucket := BucketScope("default", "b")
	check := func(p Permission, sc Scope, want bool) {
		t.Helper()
		got, err := st.Allowed(ctx, "u", p, sc)
		if err != nil || got != want {
			t.Fatalf("Allowed(u, %s, %s) = %v, %v; want %v", p, sc, got, err, want)
		}
	}
	check(Get, bucket, false) // caches "no grants"
	if _, err := st.Grant(ctx, "u", bucket, Get); err != nil {
		t.Fatal(err)
	}
	check(Get, bucket, true) // the grant dropped the cached entry
	if _, err := st.Grant(ctx, "u", bucket, Put|Delete); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Grant(ctx, "u", TypeScope("default"), Get); err != nil {
		t.Fatal(err)
	}
	gs, err := st.Grant(ctx, "u", AnyScope(), ListBuckets)
	if err != nil {
		t.Fatal(err)
	}
	if got := grantsString(gs); got != `any:list_buckets "default":get "default" "b":get,put,delete` {
		t.Fatalf("grants = %s", got)
	}
	// Revoking on the bucket leaves the type's get: the bucket is still readable.
	gs, err = st.Revoke(ctx, "u", bucket, Get|Put)
	if err != nil {
		t.Fatal(err)
	}
	if got := grantsString(gs); got != `any:list_buckets "default":get "default" "b":delete` {
		t.Fatalf("grants after revoke = %s", got)
	}
	check(Get, bucket, true)
	check(Put, bucket, false)
	// Revoking what was never granted changes nothing; revoking the rest removes the record.
	if _, err := st.Revoke(ctx, "u", BucketScope("default", "never"), Get); err != nil {
		t.Fatal(err)
	}
	if gs, err = st.Revoke(ctx, "u", bucket, Delete); err != nil || grantsString(gs) != `any:list_buckets "default":get` {
		t.Fatalf("grants = %s, %v", grantsString(gs), err)
	}
	if n := countKeys(t, db, userPrefix("u")); n != 2 {
		t.Fatalf("%d grant records stored, want 2 (an emptied grant is deleted)", n)
	}
	// Another store over the same DB (a restart) reads the same grants.
	if gs, err := NewStore(db).Grants(ctx, "u"); err != nil || grantsString(gs) != `any:list_buckets "default":get` {
		t.Fatalf("grants read afresh = %s, %v", grantsString(gs), err)
	}
	// A user whose key id prefixes another's sees none of its grants.
	if gs, err := st.Grants(ctx, "u2"); err != nil || len(gs) != 0 {
		t.Fatalf("grants of u2 = %s, %v", grantsString(gs), err)
	}
}

func grantsString(gs []Grant) string {
	var parts []string
	for _, g := range gs {
		parts = append(parts, g.String()+":"+g.Permissions.String())
	}
	return strings.Join(parts, " ")
}

func countKeys(t *testing.T, db *storage.DB, prefix []byte) int {
	t.Helper()
	it := db.IteratePrefix(prefix)
	defer it.Release()
	n := 0
	for it.Next() {
		n++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStoreLimits(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	for _, tc := range []struct {
		user string
		sc   Scope
		want error
	}{
		{"u", Scope{}, ErrInvalidScope},
		{"u", TypeScope(strings.Repeat("t", MaxNameLen+1)), ErrInvalidScope},
		{"", AnyScope(), ErrUnknownUser},
		{strings.Repeat("u", MaxNameLen+1), AnyScope(), ErrUnknownUser},
	} {
		if _, err := st.Grant(ctx, tc.user, tc.sc, Get); !errors.Is(err, tc.want) {
			t.Errorf("Grant(%.10q, %+.20v) = %v, want %v", tc.user, tc.sc, err, tc.want)
		}
	}
	st.maxScopes = 20 // MaxScopesPerUser, scaled down: each grant reads the user's others
	for i := 0; i < st.maxScopes; i++ {
		if _, err := st.Grant(ctx, "many", BucketScope("default", "b"+strconv.Itoa(i)), Get); err != nil {
			t.Fatal(i, err)
		}
	}
	if _, err := st.Grant(ctx, "many", BucketScope("default", "one-more"), Get); !errors.Is(err, ErrTooManyGrants) {
		t.Fatalf("grant %d = %v, want ErrTooManyGrants", st.maxScopes+1, err)
	}
	// Adding to an existing scope is still allowed at the limit.
	if _, err := st.Grant(ctx, "many", BucketScope("default", "b0"), Put); err != nil {
		t.Fatalf("adding to an existing scope at the limit: %v", err)
	}
}

// TestStoreCacheRace checks under -race that checks running beside grants and revokes
// never see a grant after the revoke that removed it has returned.
func TestStoreCacheRace(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	sc := BucketScope("default", "b")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := st.Allowed(ctx, "u", Get, sc); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 50 {
		if _, err := st.Grant(ctx, "u", sc, Get); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Revoke(ctx, "u", sc, Get); err != nil {
			t.Fatal(err)
		}
		if ok, err := st.Allowed(ctx, "u", Get, sc); err != nil || ok {
			t.Fatalf("after the revoke: Allowed = %v, %v", ok, err)
		}
	}
	close(stop)
	wg.Wait()
}

// fakeUsers is a Users over a map of key id → user.
type fakeUsers map[string]struct {
	secret  string
	enabled bool
}

func (f fakeUsers) User(_ context.Context, keyID string) (string, bool, bool, error) {
	u, ok := f[keyID]
	return u.secret, u.enabled, ok, nil
}

func TestGuard(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t)
	users := fakeUsers{
		"ALICE": {"alice-secret", true},
		"BOB":   {"bob-secret", false},
	}
	g := NewGuard(users, st, func(id, secret string) bool { return id == "ADMIN" && secret == "admin-secret" })
	for _, tc := range []struct {
		name, id, secret string
		ok, admin        bool
	}{
		{"user", "ALICE", "alice-secret", true, false},
		{"admin credential", "ADMIN", "admin-secret", true, true},
		{"wrong secret", "ALICE", "alice-secreT", false, false},
		{"secret prefix", "ALICE", "alice-secre", false, false},
		{"empty secret", "ALICE", "", false, false},
		{"disabled user", "BOB", "bob-secret", false, false},
		{"unknown user", "CAROL", "x", false, false},
		{"empty key id", "", "", false, false},
		{"admin id, user secret", "ADMIN", "alice-secret", false, false},
		{"huge key id", strings.Repeat("A", 1<<16), "x", false, false},
		{"huge secret", "ALICE", strings.Repeat("s", 1<<16), false, false},
	} {
		p, err := g.Authenticate(ctx, tc.id, tc.secret)
		switch {
		case tc.ok && (err != nil || p.Admin != tc.admin || p.KeyID != tc.id):
			t.Errorf("%s: Authenticate = %+v, %v", tc.name, p, err)
		case !tc.ok && !errors.Is(err, ErrUnauthenticated):
			t.Errorf("%s: Authenticate = %+v, %v; want ErrUnauthenticated", tc.name, p, err)
		}
	}

	alice, err := g.Authenticate(ctx, "ALICE", "alice-secret")
	if err != nil {
		t.Fatal(err)
	}
	var denied *DeniedError
	if err := alice.Check(ctx, Get, BucketScope("default", "b")); !errors.As(err, &denied) || denied.User != "ALICE" {
		t.Fatalf("Check without grants = %v", err)
	}
	if _, err := g.Grant(ctx, "ALICE", TypeScope("default"), Get); err != nil {
		t.Fatal(err)
	}
	if err := alice.Check(ctx, Get, BucketScope("default", "b")); err != nil {
		t.Fatalf("Check after the grant (same principal, no re-login) = %v", err)
	}
	if _, err := g.Grant(ctx, "CAROL", AnyScope(), Get); !errors.Is(err, ErrUnknownUser) {
		t.Fatalf("grant to an unknown user = %v", err)
	}
	// A grant to a disabled user is kept for when it is enabled again.
	if _, err := g.Grant(ctx, "BOB", AnyScope(), Get); err != nil {
		t.Fatalf("grant to a disabled user = %v", err)
	}
	admin, err := g.Authenticate(ctx, "ADMIN", "admin-secret")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Permissions() {
		if err := admin.Check(ctx, p, AnyScope()); err != nil {
			t.Errorf("admin lacks %s: %v", p, err)
		}
	}
}
