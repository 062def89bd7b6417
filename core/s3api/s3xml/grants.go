package s3xml

import (
	"strings"

	"github.com/cairnkv/cairn/core/s3/s3types"
)

// grantHeaders lists the grant header suffixes (after "x-amz-grant-" or
// "x-obj-grant-") and their permissions in the order ParseGrantHeaders reads them, which
// is the order of the grants it returns: the headers' documented order, as GET ?acl
// lists them on AWS.
var grantHeaders = [...]struct {
	suffix string
	perm   s3types.Permission
}{
	{"read", s3types.PermRead},
	{"write", s3types.PermWrite},
	{"read-acp", s3types.PermReadACP},
	{"write-acp", s3types.PermWriteACP},
	{"full-control", s3types.PermFullControl},
}

// The prefixes of the grant header names: the real one and the interface's neutral
// spelling.
const (
	GrantHeaderPrefix        = "x-amz-grant-"
	GrantHeaderPrefixNeutral = "x-obj-grant-"
)

// A grantee named in a header, before resolution.
type headerGrant struct {
	perm  s3types.Permission
	key   string // "id", "emailaddress" or "uri"
	value string
}

// ParseGrantHeaders builds an ACL from the grant headers of a request. get returns the
// values of a header by lower-case name (nil when absent); the headers read are
// x-amz-grant-{full-control,read,write,read-acp,write-acp} and the same names with
// x-obj-grant-. present reports whether any of them was sent (even empty); when it is
// false the ACL is zero and err nil.
//
// A value is a comma-separated list of key=value items, the key one of id, emailAddress
// and uri (case-insensitive), the value in optional double quotes (a quoted value may
// hold commas), white space allowed around every part:
//
//	x-amz-grant-read: id="8d6f…", emailAddress="a@example.com", uri="http://acs.amazonaws.com/groups/global/AllUsers"
//
// The ACL's owner is owner; its grants are exactly those listed (no implicit owner
// FULL_CONTROL, as AWS does), in the order read, write, read-acp, write-acp,
// full-control, within one permission the x-amz- header before the x-obj- one and items in
// the order written. id and emailAddress grants are resolved with res to
// CanonicalUser grants with the user's display name; uri must name a predefined group.
//
// Errors are *s3types.Error: InvalidArgument for bad syntax, an unknown key, a uri that is
// not a predefined group, more than [MaxGrants] grants, or an unknown canonical id
// ("Invalid id"); UnresolvableGrantByEmailAddress for an unknown e-mail address.
// Resolver failures other than an unknown user are returned wrapped.
func ParseGrantHeaders(get func(name string) []string, owner s3types.Owner, res Resolver) (acl s3types.ACL, present bool, err error) {
	var pending []headerGrant
	for _, h := range grantHeaders {
		for _, prefix := range [...]string{GrantHeaderPrefix, GrantHeaderPrefixNeutral} {
			name := prefix + h.suffix
			for _, v := range get(name) {
				present = true
				if pending, err = parseGrantValue(pending, name, v, h.perm); err != nil {
					return s3types.ACL{}, true, err
				}
			}
		}
	}
	if !present {
		return s3types.ACL{}, false, nil
	}
	acl = s3types.ACL{Owner: owner, Grants: make([]s3types.Grant, 0, len(pending))}
	for _, p := range pending {
		var g s3types.Grantee
		switch p.key {
		case "id":
			g, err = resolveID(res, p.value)
		case "emailaddress":
			g, err = resolveEmail(res, p.value)
		default:
			g = s3types.Grantee{Type: s3types.GranteeGroup, URI: p.value}
		}
		if err != nil {
			return s3types.ACL{}, true, err
		}
		acl.Grants = append(acl.Grants, s3types.Grant{Grantee: g, Permission: p.perm})
	}
	return acl, true, nil
}

func grantSyntaxError(header, what string) error {
	return s3types.Errorf(s3types.InvalidArgument, "Invalid value of header %s: %s", header, what)
}

// parseGrantValue appends the grants of one header value to out.
func parseGrantValue(out []headerGrant, header, v string, perm s3types.Permission) ([]headerGrant, error) {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' }
	i, n := 0, len(v)
	for {
		// key
		for i < n && isSpace(v[i]) {
			i++
		}
		start := i
		for i < n && v[i] != '=' && v[i] != ',' && v[i] != '"' {
			i++
		}
		if i >= n || v[i] != '=' {
			return nil, grantSyntaxError(header, "expected key=value")
		}
		key := strings.ToLower(strings.TrimRight(v[start:i], " \t"))
		if key != "id" && key != "emailaddress" && key != "uri" {
			return nil, grantSyntaxError(header, "the grantee must be id, emailAddress or uri")
		}
		i++ // '='
		for i < n && isSpace(v[i]) {
			i++
		}
		// value
		var val string
		if i < n && v[i] == '"' {
			end := strings.IndexByte(v[i+1:], '"')
			if end < 0 {
				return nil, grantSyntaxError(header, "unterminated quoted value")
			}
			val = v[i+1 : i+1+end]
			i += end + 2
			for i < n && isSpace(v[i]) {
				i++
			}
		} else {
			start = i
			for i < n && v[i] != ',' && v[i] != '"' {
				i++
			}
			if i < n && v[i] == '"' {
				return nil, grantSyntaxError(header, "stray quote")
			}
			val = v[start:i]
		}
		val = strings.Trim(val, " \t")
		if val == "" {
			return nil, grantSyntaxError(header, "empty grantee")
		}
		if key == "uri" && !s3types.ValidGroup(val) {
			return nil, grantSyntaxError(header, "uri must name a predefined group")
		}
		if len(out) >= MaxGrants {
			return nil, s3types.Errorf(s3types.InvalidArgument, "Too many grants (at most %d)", MaxGrants)
		}
		out = append(out, headerGrant{perm: perm, key: key, value: val})
		if i == n {
			return out, nil
		}
		if v[i] != ',' {
			return nil, grantSyntaxError(header, "expected a comma between grantees")
		}
		i++
	}
}
