package kv

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
)

// putLinked stores value under bucket/key with links given as "bucket/key/tag".
func putLinked(t testing.TB, s *Service, bucket, key, value string, links ...string) {
	t.Helper()
	var ls []core.Link
	for _, l := range links {
		p := strings.SplitN(l, "/", 3)
		ls = append(ls, core.Link{Bucket: p[0], Key: p[1], Tag: p[2]})
	}
	_, err := s.Put(ctx, &PutRequest{Type: core.DefaultType, Bucket: bucket, Key: key,
		Value: core.Sibling{Value: []byte(value), ContentType: "text/plain", Links: ls}})
	if err != nil {
		t.Fatalf("put %s/%s: %v", bucket, key, err)
	}
}

// walkGraph stores the graph the walk tests use:
//
//	people/alice → people/bob (friend), people/carol (friend), pets/rex (pet),
//	               people/ghost (friend, missing), people/dead (friend, deleted)
//	people/bob   → pets/rex (pet), people/carol (friend)
//	people/carol → pets/rex (pet), pets/tom (pet), people/alice (friend)
func walkGraph(t testing.TB, s *Service) {
	putLinked(t, s, "people", "alice", "A", "people/bob/friend", "people/carol/friend", "pets/rex/pet",
		"people/ghost/friend", "people/dead/friend")
	putLinked(t, s, "people", "bob", "B", "pets/rex/pet", "people/carol/friend")
	putLinked(t, s, "people", "carol", "C", "pets/rex/pet", "pets/tom/pet", "people/alice/friend")
	putLinked(t, s, "pets", "rex", "R")
	putLinked(t, s, "pets", "tom", "T")
	putLinked(t, s, "people", "dead", "D")
	if _, err := s.Delete(ctx, core.DefaultType, "people", "dead", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

// names renders walk results as "bucket/key=value" lists per kept step.
func names(res [][]*core.Object) string {
	var steps []string
	for _, objs := range res {
		var n []string
		for _, o := range objs {
			n = append(n, o.Bucket+"/"+o.Key+"="+string(o.Siblings[0].Value))
		}
		steps = append(steps, "["+strings.Join(n, " ")+"]")
	}
	return strings.Join(steps, "")
}

func TestWalk(t *testing.T) {
	s := newTestService(t, Config{})
	walkGraph(t, s)
	step := func(b, tag string, keep bool) WalkStep { return WalkStep{Bucket: b, Tag: tag, Keep: keep} }
	for _, c := range []struct {
		name  string
		from  string
		steps []WalkStep
		want  string
	}{
		{"wildcards skip missing and deleted", "alice", []WalkStep{step("_", "_", true)},
			"[people/bob=B people/carol=C pets/rex=R]"},
		{"bucket filter", "alice", []WalkStep{step("people", "_", true)}, "[people/bob=B people/carol=C]"},
		{"tag filter", "alice", []WalkStep{step("_", "pet", true)}, "[pets/rex=R]"},
		{"bucket and tag", "carol", []WalkStep{step("pets", "pet", true)}, "[pets/rex=R pets/tom=T]"},
		{"no match", "alice", []WalkStep{step("cars", "_", true)}, "[]"},
		{"unkept step chains into the next", "alice", []WalkStep{step("people", "friend", false), step("_", "pet", true)},
			"[pets/rex=R pets/tom=T]"},
		{"two kept steps", "alice", []WalkStep{step("people", "friend", true), step("_", "_", true)},
			"[people/bob=B people/carol=C][people/alice=A people/carol=C pets/rex=R pets/tom=T]"},
		{"three steps, middle unkept", "bob", []WalkStep{step("_", "friend", true), step("_", "friend", false), step("_", "_", true)},
			"[people/carol=C][people/bob=B people/carol=C pets/rex=R]"},
		{"empty kept step, then nothing to follow", "alice", []WalkStep{step("_", "nosuchtag", true), step("_", "_", true)},
			"[][]"},
		{"steps after the last kept one are not walked", "alice", []WalkStep{step("_", "pet", true), step("_", "_", false)},
			"[pets/rex=R]"},
		{"no kept step", "alice", []WalkStep{step("_", "_", false)}, ""},
		{"no step", "alice", nil, ""},
		{"object without links", "rex", []WalkStep{step("_", "_", true)}, "[]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := s.Walk(ctx, core.DefaultType, "people", c.from, c.steps, WalkOptions{})
			if c.from == "rex" {
				res, err = s.Walk(ctx, core.DefaultType, "pets", c.from, c.steps, WalkOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := names(res); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestWalkOriginNotFound(t *testing.T) {
	s := newTestService(t, Config{})
	walkGraph(t, s)
	steps := []WalkStep{{Bucket: "_", Tag: "_", Keep: true}}
	for _, key := range []string{"ghost", "dead"} {
		if _, err := s.Walk(ctx, core.DefaultType, "people", key, steps, WalkOptions{}); !IsNotFound(err) {
			t.Errorf("walk from %s: %v, want not found", key, err)
		}
	}
	if _, err := s.Walk(ctx, "nosuchtype", "people", "alice", steps, WalkOptions{}); !IsNotFound(err) {
		t.Errorf("walk in an unknown type: %v, want not found", err)
	}
}

func TestWalkLimits(t *testing.T) {
	s := newTestService(t, Config{})
	walkGraph(t, s)
	all := []WalkStep{{Bucket: "_", Tag: "_", Keep: true}}
	// alice has five distinct targets (two of them missing or deleted).
	if _, err := s.Walk(ctx, core.DefaultType, "people", "alice", all, WalkOptions{MaxObjects: 5}); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	_, err := s.Walk(ctx, core.DefaultType, "people", "alice", all, WalkOptions{MaxObjects: 4})
	if core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorMessage(err), "more than 4 objects") {
		t.Fatalf("over the object limit: %v", err)
	}
	// bob, carol and rex hold three bytes; an unkept step's values do not count.
	if _, err := s.Walk(ctx, core.DefaultType, "people", "alice", all, WalkOptions{MaxBytes: 3}); err != nil {
		t.Fatalf("at the byte limit: %v", err)
	}
	_, err = s.Walk(ctx, core.DefaultType, "people", "alice", all, WalkOptions{MaxBytes: 2})
	if core.ErrorCode(err) != core.EINVALID || !strings.Contains(core.ErrorMessage(err), "exceed 2 bytes") {
		t.Fatalf("over the byte limit: %v", err)
	}
	two := []WalkStep{{Bucket: "people", Tag: "_", Keep: false}, {Bucket: "pets", Tag: "_", Keep: true}}
	if _, err := s.Walk(ctx, core.DefaultType, "people", "alice", two, WalkOptions{MaxBytes: 2}); err != nil {
		t.Fatalf("unkept values counted: %v", err)
	}
}

func TestWalkContextEnded(t *testing.T) {
	s := newTestService(t, Config{})
	walkGraph(t, s)
	c, cancel := context.WithCancel(ctx)
	cancel()
	_, err := s.Walk(c, core.DefaultType, "people", "alice", []WalkStep{{Bucket: "_", Tag: "_", Keep: true}}, WalkOptions{})
	if core.ErrorCode(err) != core.EUNAVAILABLE || core.ErrorMessage(err) != "request timed out\n" {
		t.Fatalf("walk with an ended context: %v", err)
	}
}

// TestWalkSiblings: the links of every live sibling count, a tombstone sibling's do not,
// and an object with siblings is returned whole.
func TestWalkSiblings(t *testing.T) {
	s := newTestService(t, Config{})
	setProps(t, s, "multi", `{"allow_mult":true}`)
	putLinked(t, s, "multi", "m", "one", "pets/rex/pet")
	putLinked(t, s, "multi", "m", "two", "pets/tom/pet", "pets/rex/pet")
	putLinked(t, s, "pets", "rex", "R")
	putLinked(t, s, "pets", "tom", "T")
	putLinked(t, s, "o", "start", "S", "multi/m/x")
	res, err := s.Walk(ctx, core.DefaultType, "multi", "m", []WalkStep{{Bucket: "_", Tag: "_", Keep: true}}, WalkOptions{})
	if err != nil || names(res) != "[pets/rex=R pets/tom=T]" {
		t.Fatalf("walk from siblings: %s, %v", names(res), err)
	}
	res, err = s.Walk(ctx, core.DefaultType, "o", "start", []WalkStep{{Bucket: "_", Tag: "_", Keep: true}}, WalkOptions{})
	if err != nil || len(res) != 1 || len(res[0]) != 1 || len(res[0][0].Siblings) != 2 {
		t.Fatalf("walk to an object with siblings: %v, %v", res, err)
	}
}

func TestStoredLinks(t *testing.T) {
	o := &core.Object{Siblings: []core.Sibling{
		{Links: []core.Link{{Bucket: "b", Key: "2", Tag: "t"}, {Bucket: "a", Key: "9", Tag: "u"}, {Bucket: "b", Key: "1", Tag: "t"}}},
		{Links: []core.Link{{Bucket: "b", Key: "1", Tag: "t"}, {Bucket: "b", Key: "1", Tag: "s"}}},
		{Deleted: true, Links: []core.Link{{Bucket: "z", Key: "z", Tag: "t"}}},
	}}
	for _, c := range []struct {
		bucket, tag string
		want        string
	}{
		{"_", "_", "a/9/u b/1/s b/1/t b/2/t"},
		{"b", "_", "b/1/s b/1/t b/2/t"},
		{"_", "t", "b/1/t b/2/t"},
		{"b", "s", "b/1/s"},
		{"z", "_", ""},
	} {
		var got []string
		for _, l := range o.MatchingLinks(c.bucket, c.tag) {
			got = append(got, l.Bucket+"/"+l.Key+"/"+l.Tag)
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("MatchingLinks(%s, %s) = %v, want %s", c.bucket, c.tag, got, c.want)
		}
	}
	if l := (&core.Object{}).MatchingLinks("_", "_"); l == nil || len(l) != 0 {
		t.Errorf("no links: %#v", l)
	}
}

// linkFunc adapts a function to hooks.LinkFun.
type linkFunc func(ctx context.Context, o *core.Object, bucket, tag string) ([]core.Link, error)

func (f linkFunc) Links(ctx context.Context, o *core.Object, bucket, tag string) ([]core.Link, error) {
	return f(ctx, o, bucket, tag)
}

func TestWalkLinkfun(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	// lines reads links from the value: one "bucket key tag" per line; it filters by
	// bucket and tag as a linkfun must.
	lines := linkFunc(func(_ context.Context, o *core.Object, bucket, tag string) ([]core.Link, error) {
		mu.Lock()
		calls = append(calls, fmt.Sprintf("%s/%s(%s,%s)", o.Bucket, o.Key, bucket, tag))
		mu.Unlock()
		var out []core.Link
		for l := range strings.Lines(string(o.Siblings[0].Value)) {
			f := strings.Fields(l)
			if len(f) != 3 {
				continue
			}
			if (bucket == WalkAny || f[0] == bucket) && (tag == WalkAny || f[2] == tag) {
				out = append(out, core.Link{Bucket: f[0], Key: f[1], Tag: f[2]})
			}
		}
		return out, nil
	})
	failing := linkFunc(func(context.Context, *core.Object, string, string) ([]core.Link, error) {
		return nil, &hooks.CallError{Kind: hooks.Failed, Module: "lf", Function: "fail", Err: errors.New("bad links field")}
	})
	plain := linkFunc(func(context.Context, *core.Object, string, string) ([]core.Link, error) {
		return nil, errors.New("boom")
	})
	prov := &testProvider{mods: map[string]map[string]any{"lf": {"lines": lines, "fail": failing, "plain": plain}}}
	s := newTestService(t, Config{Hooks: hooks.NewRegistry(prov)})
	setProps(t, s, "docs", `{"linkfun":{"mod":"lf","fun":"lines"}}`)
	// docs/a names its links in its value; its stored Link metadata is ignored.
	putLinked(t, s, "docs", "a", "docs b next\npets rex pet\nnowhere\n", "pets/tom/pet")
	putLinked(t, s, "docs", "b", "pets tom pet\n")
	// Buckets keep the stock linkfun (which this registry cannot resolve: stored links).
	putLinked(t, s, "pets", "rex", "R", "pets/tom/pet")
	putLinked(t, s, "pets", "tom", "T")

	res, err := s.Walk(ctx, core.DefaultType, "docs", "a", []WalkStep{
		{Bucket: "_", Tag: "_", Keep: true}, {Bucket: "pets", Tag: "pet", Keep: true}}, WalkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res); got != "[docs/b=pets tom pet\n pets/rex=R][pets/tom=T]" {
		t.Errorf("got %q", got)
	}
	slices.Sort(calls)
	if got := strings.Join(calls, " "); got != "docs/a(_,_) docs/b(pets,pet)" {
		t.Errorf("linkfun calls %s", got)
	}

	for _, c := range []struct{ fun, want string }{
		{"fail", "linkfun lf:fail failed on docs/a: bad links field\n"},
		{"plain", "linkfun lf:plain failed on docs/a: boom\n"},
	} {
		setProps(t, s, "docs", `{"linkfun":{"mod":"lf","fun":"`+c.fun+`"}}`)
		_, err = s.Walk(ctx, core.DefaultType, "docs", "a", []WalkStep{{Bucket: "_", Tag: "_", Keep: true}}, WalkOptions{})
		if core.ErrorCode(err) != core.EINTERNAL || core.ErrorMessage(err) != c.want {
			t.Errorf("failing linkfun %s: %v", c.fun, err)
		}
	}

	// A linkfun the registry cannot resolve (a JavaScript one: no runtime) is named.
	setProps(t, s, "docs", `{"linkfun":{"jsanon":"function(v){return [];}"}}`)
	_, err = s.Walk(ctx, core.DefaultType, "docs", "a", []WalkStep{{Bucket: "_", Tag: "_", Keep: true}}, WalkOptions{})
	if core.ErrorCode(err) != core.EINTERNAL || !strings.HasPrefix(core.ErrorMessage(err), `linkfun {"jsanon":"function(v){return [];}"} cannot run: `) {
		t.Errorf("unresolvable linkfun: %v", err)
	}
}

// TestWalkNoRegistry: without a hook registry every bucket's links are its stored links,
// whatever its linkfun property says.
func TestWalkNoRegistry(t *testing.T) {
	s := newTestService(t, Config{})
	setProps(t, s, "docs", `{"linkfun":{"mod":"lf","fun":"lines"}}`)
	putLinked(t, s, "docs", "a", "pets rex pet\n", "pets/tom/pet")
	putLinked(t, s, "pets", "tom", "T")
	putLinked(t, s, "pets", "rex", "R")
	res, err := s.Walk(ctx, core.DefaultType, "docs", "a", []WalkStep{{Bucket: "_", Tag: "_", Keep: true}}, WalkOptions{})
	if err != nil || names(res) != "[pets/tom=T]" {
		t.Fatalf("got %s, %v", names(res), err)
	}
}

func TestIsStockLinkfun(t *testing.T) {
	for _, c := range []struct {
		mod, fun string
		want     bool
	}{
		{"riak_kv_wm_link_walker", "mapreduce_linkfun", true},
		{"store_kv_wm_link_walker", "mapreduce_linkfun", true},
		{"native:riak_kv_wm_link_walker", "mapreduce_linkfun", true},
		{"wasm:riak_kv_wm_link_walker", "mapreduce_linkfun", false},
		{"riak_kv_wm_link_walker", "other", false},
		{"mine", "mapreduce_linkfun", false},
	} {
		if got := isStockLinkfun(&core.HookSpec{Mod: c.mod, Fun: c.fun}); got != c.want {
			t.Errorf("isStockLinkfun(%s:%s) = %v", c.mod, c.fun, got)
		}
	}
}
