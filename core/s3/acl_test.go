package s3

import "testing"

// TestOwnerKeepsACP: the owner keeps READ_ACP and WRITE_ACP on its resource whatever
// the ACL says, and nothing more; nobody else gains anything from the rule.
func TestOwnerKeepsACP(t *testing.T) {
	owner := Owner{ID: "aaaa", DisplayName: "alice"}
	alice := Requester{ID: "aaaa"}
	bob := Requester{ID: "bbbb"}
	bobRead := Grant{Grantee: Grantee{Type: GranteeCanonicalUser, ID: "bbbb"}, Permission: PermRead}
	allFC := Grant{Grantee: Grantee{Type: GranteeGroup, URI: GroupAllUsers}, Permission: PermFullControl}
	none := ACL{Owner: owner}
	onlyBob := ACL{Owner: owner, Grants: []Grant{bobRead}}
	public := ACL{Owner: owner, Grants: []Grant{allFC}}
	noOwner := ACL{Owner: Owner{}}
	tests := []struct {
		name string
		acl  ACL
		r    Requester
		perm Permission
		want bool
	}{
		{"owner, no grants, READ_ACP", none, alice, PermReadACP, true},
		{"owner, no grants, WRITE_ACP", none, alice, PermWriteACP, true},
		{"owner, no grants, READ", none, alice, PermRead, false},
		{"owner, no grants, WRITE", none, alice, PermWrite, false},
		{"owner, no grants, FULL_CONTROL", none, alice, PermFullControl, false},
		{"owner, everything granted away, WRITE_ACP", onlyBob, alice, PermWriteACP, true},
		{"owner, everything granted away, READ", onlyBob, alice, PermRead, false},
		{"other user, READ grant, READ", onlyBob, bob, PermRead, true},
		{"other user, READ grant, READ_ACP", onlyBob, bob, PermReadACP, false},
		{"other user, READ grant, WRITE_ACP", onlyBob, bob, PermWriteACP, false},
		{"anonymous, no grants, READ_ACP", none, AnonymousRequester, PermReadACP, false},
		{"anonymous, AllUsers FULL_CONTROL, WRITE_ACP", public, AnonymousRequester, PermWriteACP, true},
		{"anonymous with the owner's id", none, Requester{ID: "aaaa", Anonymous: true}, PermReadACP, false},
		{"empty id against an ACL with no owner", noOwner, Requester{}, PermReadACP, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.acl.Allows(tt.r, tt.perm); got != tt.want {
				t.Errorf("Allows(%+v, %s) = %v, want %v", tt.r, tt.perm, got, tt.want)
			}
			if got, want := OwnerKeepsACP(tt.acl.Owner, tt.r, tt.perm), tt.want && tt.r.ID == tt.acl.Owner.ID && !tt.r.Anonymous; got != want {
				t.Errorf("OwnerKeepsACP = %v, want %v", got, want)
			}
		})
	}
}
