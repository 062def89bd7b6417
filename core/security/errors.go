package security

import (
	"errors"
	"strconv"
	"strings"
)

// Sentinel errors (compare with errors.Is).
var (
	// ErrUnauthenticated: the credentials name no enabled user, or the secret is wrong.
	// Which of these it was is deliberately not told apart.
	ErrUnauthenticated = errors.New("security: bad credentials")
	// ErrUnknownPermission: a permission name that is not one of the permissions.
	ErrUnknownPermission = errors.New("unknown permission")
	// ErrInvalidScope: a grant's scope that names no bucket type, or a name too long.
	ErrInvalidScope = errors.New("invalid grant scope")
	// ErrTooManyGrants: a user would hold grants on more than MaxScopesPerUser scopes.
	ErrTooManyGrants = errors.New("too many grants")
	// ErrUnknownUser: a grant to a key id that names no user.
	ErrUnknownUser = errors.New("no such user")
)

// DeniedError is a refused permission. Its message is Riak's:
//
//	Permission denied: User 'KEYID' does not have 'riak_kv.get' on {<<"default">>,<<"b">>}
type DeniedError struct {
	// User is the key id of the user refused.
	User string
	// Permission is the permission the operation needed.
	Permission Permission
	// Scope is where it was needed.
	Scope Scope
}

// Error returns Riak's refusal text.
func (e *DeniedError) Error() string {
	return "Permission denied: User '" + e.User + "' does not have '" + e.Permission.RiakName() + "' on " + e.Scope.erlang()
}

// maxRendered bounds the bytes of a name quoted in a refusal (names have no length limit
// of their own, and a refusal must not echo a megabyte back).
const maxRendered = 256

// erlangBinary renders s as Erlang's ~p prints a binary: <<"text">> when every byte is
// printable ASCII, otherwise the byte values, <<1,2,3>>; longer names are cut short with
// "...".
func erlangBinary(s string) string {
	cut := len(s) > maxRendered
	if cut {
		s = s[:maxRendered]
	}
	var b strings.Builder
	b.WriteString("<<")
	if printableASCII(s) {
		b.WriteByte('"')
		for i := 0; i < len(s); i++ {
			if s[i] == '"' || s[i] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(s[i])
		}
		b.WriteByte('"')
	} else {
		for i := 0; i < len(s); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(int(s[i])))
		}
	}
	if cut {
		b.WriteString(",...")
	}
	b.WriteString(">>")
	return b.String()
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
