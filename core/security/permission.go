// Package security is the key-value interface's access control, modelled on Riak's
// security: users authenticate with their access key (key id and secret), and every
// operation needs a permission granted to the user on the bucket it touches, on the
// bucket's type, or on any bucket.
//
// It holds the permissions (Permission), the places a grant applies to (Scope), the
// durable grant store with its cache (Store, under storage.TagGrant), and the check a
// request passes before it runs (Guard, Principal). It knows nothing of HTTP: core/kvapi
// maps each route to the permission it needs, and core/server supplies the user
// accounts (Users). It imports only the standard library and core/storage.
package security

import (
	"fmt"
	"math/bits"
	"strings"
)

// Permission is a set of permissions (a bit set); a single permission has one bit.
type Permission uint16

// The permissions. Each has a short name (used in grants and listings) and the name of
// Riak's equivalent, which grants accept too and refusals quote.
const (
	// Get reads objects, counters and data types, bucket properties and preflists, and
	// walks links.
	Get Permission = 1 << iota
	// Put stores objects (PUT, POST), increments counters and updates data types.
	Put
	// Delete deletes objects.
	Delete
	// ListKeys lists a bucket's keys; a MapReduce job over a whole bucket needs it too.
	ListKeys
	// ListBuckets lists a bucket type's buckets.
	ListBuckets
	// MapReduce runs MapReduce jobs reading the bucket.
	MapReduce
	// Index queries secondary indexes.
	Index
	// SetProps changes or resets a bucket's properties.
	SetProps
	// Admin changes bucket-type properties (on that type) and manages modules (on any).
	Admin

	permissionCount = iota
)

// permNames are the short and Riak names of each permission, by bit.
var permNames = [permissionCount]struct{ short, riak string }{
	{"get", "riak_kv.get"},
	{"put", "riak_kv.put"},
	{"delete", "riak_kv.delete"},
	{"list_keys", "riak_kv.list_keys"},
	{"list_buckets", "riak_kv.list_buckets"},
	{"mapreduce", "riak_kv.mapreduce"},
	{"index", "riak_kv.index"},
	{"set_props", "riak_core.set_bucket"},
	{"admin", "cairn.admin"},
}

// AllPermissions is every permission.
const AllPermissions Permission = 1<<permissionCount - 1

// Permissions returns every permission, one per element, in bit order.
func Permissions() []Permission {
	out := make([]Permission, permissionCount)
	for i := range out {
		out[i] = 1 << i
	}
	return out
}

// ParsePermission returns the permission with the short name or Riak name s (case does
// not matter).
func ParsePermission(s string) (Permission, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for i, n := range permNames {
		if s == n.short || s == n.riak {
			return 1 << i, nil
		}
	}
	return 0, fmt.Errorf("%w: %q (want one of %s)", ErrUnknownPermission, s, AllPermissions)
}

// ParsePermissions returns the union of the named permissions: each element may itself
// be a comma-separated list. It refuses an empty list.
func ParsePermissions(names []string) (Permission, error) {
	var p Permission
	for _, n := range names {
		for _, one := range strings.Split(n, ",") {
			if strings.TrimSpace(one) == "" {
				continue
			}
			q, err := ParsePermission(one)
			if err != nil {
				return 0, err
			}
			p |= q
		}
	}
	if p == 0 {
		return 0, fmt.Errorf("%w: no permission named", ErrUnknownPermission)
	}
	return p, nil
}

// Names returns the short names of the permissions in p, in bit order.
func (p Permission) Names() []string {
	out := make([]string, 0, bits.OnesCount16(uint16(p)))
	for i, n := range permNames {
		if p&(1<<i) != 0 {
			out = append(out, n.short)
		}
	}
	return out
}

// String returns the short names of p joined by commas.
func (p Permission) String() string { return strings.Join(p.Names(), ",") }

// RiakName returns the Riak name of the lowest permission in p ("" for none).
func (p Permission) RiakName() string {
	if p == 0 {
		return ""
	}
	return permNames[bits.TrailingZeros16(uint16(p))].riak
}
