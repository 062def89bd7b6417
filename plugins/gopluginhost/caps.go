package gopluginhost

import (
	"fmt"
	"strings"

	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/sdk/goplugin"
	"github.com/cairnkv/cairn/sdk/goplugin/hookspb"
)

// pointSet is a set of extension points, a bit per hooks.Point.
type pointSet uint8

func (s pointSet) has(p hooks.Point) bool { return s&(1<<p) != 0 }

// points lists the set's points in order.
func (s pointSet) points() []hooks.Point {
	var out []hooks.Point
	for p := hooks.PointPrecommit; p <= hooks.PointReduce; p++ {
		if s.has(p) {
			out = append(out, p)
		}
	}
	return out
}

func (s pointSet) String() string {
	if s == 0 {
		return "none"
	}
	var names []string
	for _, p := range s.points() {
		names = append(names, p.String())
	}
	return strings.Join(names, ", ")
}

// capabilities is what a plugin said of itself in Describe.
type capabilities struct {
	// points are the points the plugin serves: those it lists and those of its
	// functions.
	points pointSet
	// funcs are the points of each function it names; nil when it names none (it
	// takes any function name at its points).
	funcs map[string]pointSet
	// order names funcs' functions once each, in the order the plugin lists them,
	// for error messages.
	order []string
}

// parseCapabilities reads a Describe answer. A plugin that reports an ABI version
// other than goplugin.ABIVersion (0 counts as unset) cannot be served.
func parseCapabilities(c *hookspb.Capabilities) (*capabilities, error) {
	if c.GetAbiVersion() != 0 && c.GetAbiVersion() != goplugin.ABIVersion {
		return nil, fmt.Errorf("the plugin speaks ABI version %d; this server speaks %d", c.GetAbiVersion(), goplugin.ABIVersion)
	}
	caps := &capabilities{}
	set := func(ps []hookspb.Point) pointSet {
		var s pointSet
		for _, pp := range ps {
			if p, ok := hooksPoint(pp); ok {
				s |= 1 << p
			}
		}
		return s
	}
	declared := set(c.GetPoints())
	caps.points = declared
	for _, f := range c.GetFunctions() {
		if f.GetName() == "" {
			return nil, fmt.Errorf("the plugin names a function without a name")
		}
		if caps.funcs == nil {
			caps.funcs = map[string]pointSet{}
		}
		if _, seen := caps.funcs[f.GetName()]; !seen {
			caps.order = append(caps.order, f.GetName())
		}
		ps := set(f.GetPoints())
		if ps == 0 {
			ps = declared // a function that lists no points serves at the plugin's points
		}
		caps.funcs[f.GetName()] |= ps
		caps.points |= ps
	}
	return caps, nil
}

// check returns an error wrapping hooks.ErrNoFunction unless plugin mod serves fun at p.
func (c *capabilities) check(mod, fun string, p hooks.Point) error {
	if !c.points.has(p) {
		return fmt.Errorf("%w: plugin %q does not serve %s (it serves: %s)", hooks.ErrNoFunction, mod, p, c.points)
	}
	if c.funcs == nil {
		return nil
	}
	ps, ok := c.funcs[fun]
	switch {
	case !ok:
		var at []string
		for _, name := range c.order {
			if c.funcs[name].has(p) {
				at = append(at, name)
			}
		}
		return fmt.Errorf("%w: plugin %q has no function %q (its %s functions: %s)", hooks.ErrNoFunction, mod, fun, p, strings.Join(at, ", "))
	case !ps.has(p):
		return fmt.Errorf("%w: function %q of plugin %q does not serve %s (it serves: %s)", hooks.ErrNoFunction, fun, mod, p, ps)
	}
	return nil
}
