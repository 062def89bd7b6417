package goplugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/cairnkv/cairn/sdk/goplugin"
)

// registrations registers name at every point of m, one function each.
var registrations = []struct {
	point    goplugin.Point
	register func(m *goplugin.Mux, name string)
	nilFunc  func(m *goplugin.Mux, name string)
}{
	{goplugin.PointPrecommit,
		func(m *goplugin.Mux, name string) {
			m.Precommit(name, func(context.Context, goplugin.Op, *goplugin.Object) (goplugin.Verdict, error) {
				return goplugin.Verdict{}, nil
			})
		},
		func(m *goplugin.Mux, name string) { m.Precommit(name, nil) }},
	{goplugin.PointPostcommit,
		func(m *goplugin.Mux, name string) {
			m.Postcommit(name, func(context.Context, goplugin.Op, *goplugin.Object) error { return nil })
		},
		func(m *goplugin.Mux, name string) { m.Postcommit(name, nil) }},
	{goplugin.PointKeyFun,
		func(m *goplugin.Mux, name string) {
			m.KeyHash(name, func(context.Context, string, string, string) ([]byte, error) { return []byte{1}, nil })
		},
		func(m *goplugin.Mux, name string) { m.KeyHash(name, nil) }},
	{goplugin.PointLinkFun,
		func(m *goplugin.Mux, name string) {
			m.Links(name, func(context.Context, *goplugin.Object, string, string) ([]goplugin.Link, error) { return nil, nil })
		},
		func(m *goplugin.Mux, name string) { m.Links(name, nil) }},
	{goplugin.PointMap,
		func(m *goplugin.Mux, name string) {
			m.Map(name, func(context.Context, goplugin.MapInput) ([]json.RawMessage, error) { return nil, nil })
		},
		func(m *goplugin.Mux, name string) { m.Map(name, nil) }},
	{goplugin.PointReduce,
		func(m *goplugin.Mux, name string) {
			m.Reduce(name, func(context.Context, []json.RawMessage, json.RawMessage) ([]json.RawMessage, error) { return nil, nil })
		},
		func(m *goplugin.Mux, name string) { m.Reduce(name, nil) }},
}

// panics returns the value f panics with, or nil.
func panics(f func()) (v any) {
	defer func() { v = recover() }()
	f()
	return nil
}

func TestMuxRegistrationPanics(t *testing.T) {
	for _, r := range registrations {
		cases := []struct {
			name string
			f    func()
			msg  string
		}{
			{"twice", func() {
				m := goplugin.NewMux()
				r.register(m, "f")
				r.register(m, "f")
			}, fmt.Sprintf("%s function %q registered twice", r.point, "f")},
			{"no name", func() { r.register(goplugin.NewMux(), "") }, "registered without a name"},
			{"nil function", func() { r.nilFunc(goplugin.NewMux(), "f") }, fmt.Sprintf("nil %s function", r.point)},
			{"after serving", func() {
				m := goplugin.NewMux()
				r.register(m, "f")
				if _, err := goplugin.NewServer(m); err != nil {
					t.Fatal(err)
				}
				r.register(m, "g")
			}, "registered after the Mux was served"},
		}
		for _, c := range cases {
			v := panics(c.f)
			if msg, _ := v.(string); !strings.Contains(msg, c.msg) {
				t.Errorf("%s, %s: panicked with %v, want %q", r.point, c.name, v, c.msg)
			}
		}
	}
}

func TestMuxFunctions(t *testing.T) {
	m := goplugin.NewMux()
	if fs := m.Functions(); len(fs) != 0 {
		t.Fatalf("an empty Mux lists %v", fs)
	}
	// The same names at every point, registered in reverse order, plus one name per
	// point.
	for i := len(registrations) - 1; i >= 0; i-- {
		r := registrations[i]
		r.register(m, "shared")
		r.register(m, "only_"+string(r.point))
	}
	var want []goplugin.Function
	var all []goplugin.Point
	for _, r := range registrations {
		all = append(all, r.point)
		want = append(want, goplugin.Function{Name: "only_" + string(r.point), Points: []goplugin.Point{r.point}})
	}
	want = append(want, goplugin.Function{Name: "shared", Points: all})
	// By name: only_chash_keyfun, only_linkfun, only_map, only_postcommit,
	// only_precommit, only_reduce, shared.
	order := []int{2, 3, 4, 1, 0, 5, 6}
	sorted := make([]goplugin.Function, len(want))
	for i, j := range order {
		sorted[i] = want[j]
	}
	if got := m.Functions(); !reflect.DeepEqual(got, sorted) {
		t.Fatalf("got %v\nwant %v", got, sorted)
	}
	// A sealed Mux may be served again, and by several harnesses at once.
	for range 2 {
		caps, err := newHarness(t, m).Describe(testContext(t))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(caps.Functions, sorted) || !reflect.DeepEqual(caps.Points, all) {
			t.Fatalf("described %+v", caps)
		}
	}
}
