package s3xml

import (
	"strings"

	"github.com/cairnkv/cairn/core/s3"
)

// grantHeaders lists the grant header suffixes (after "x-amz-grant-" or
// "x-obj-grant-") and their permissions in the order ParseGrantHeaders reads them, which
// is the order of the grants it returns: the headers' documented order, as GET ?acl
// lists them on AWS.
var grantHeaders = [...]struct {
	suffix string
	perm   s3.Permission
}{
	{"read", s3.PermRead},
	{"write", s3.PermWrite},
	{"read-acp", s3.PermReadACP},
	{"write-acp", s3.PermWriteACP},
	{"full-control", s3.PermFullControl},
}

// The prefixes of the grant header names: the real one and the interface's neutral
// spelling.
const (
	GrantHeaderPrefix        = "x-amz-grant-"
	GrantHeaderPrefixNeutral = "x-obj-grant-"
)

// A grantee named in a header, before resolution.
type headerGrant struct {
	perm  s3.Permission
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
// Errors are *s3.Error: InvalidArgument for bad syntax, an unknown key, a uri that is
// not a predefined group, more than [MaxGrants] grants, or an unknown canonical id
// ("Invalid id"); UnresolvableGrantByEmailAddress for an unknown e-mail address.
// Resolver failures other than an unknown user are returned wrapped.
func ParseGrantHeaders(get func(name string) []string, owner s3.Owner, res Resolver) (acl s3.ACL, present bool, err error) {
	var pending []headerGrant
	for _, h := range grantHeaders {
		for _, prefix := range [...]string{GrantHeaderPrefix, GrantHeaderPrefixNeutral} {
			name := prefix + h.suffix
			for _, v := range get(name) {
				present = true
				if pending, err = parseGrantValue(pending, name, v, h.perm); err != nil {
					return s3.ACL{}, true, err
				}
			}
		}
	}
	if !present {
		return s3.ACL{}, false, nil
	}
	acl = s3.ACL{Owner: owner, Grants: make([]s3.Grant, 0, len(pending))}
	for _, p := range pending {
		var g s3.Grantee
		switch p.key {
		case "id":
			g, err = resolveID(res, p.value)
		case "emailaddress":
			g, err = resolveEmail(res, p.value)
		default:
			g = s3.Grantee{Type: s3.GranteeGroup, URI: p.value}
		}
		if err != nil {
			return s3.ACL{}, true, err
		}
		acl.Grants = append(acl.Grants, s3.Grant{Grantee: g, Permission: p.perm})
	}
	return acl, true, nil
}

func grantSyntaxError(header, what string) error {
	return s3.Errorf(s3.InvalidArgument, "Invalid value of header %s: %s", header, what)
}

// parseGrantValue appends the grants of one header value to out.
func parseGrantValue(out []headerGrant, header, v string, perm s3.Permission) ([]headerGrant, error) {
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
		if key == "uri" && !s3.ValidGroup(val) {
			return nil, grantSyntaxError(header, "uri must name a predefined group")
		}
		if len(out) >= MaxGrants {
			return nil, s3.Errorf(s3.InvalidArgument, "Too many grants (at most %d)", MaxGrants)
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
