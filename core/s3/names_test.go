package s3

import (
	"context"
	"testing"
)

// TestReservedNames is the attack of a user taking the display name "admin" (which
// every ACL and listing then shows as owner or grantee): a user name or e-mail address
// that reads as a reserved name, by case, width, look-alike letters, separators or
// invisible characters, is refused when a user is created or changed; the server's own
// administrator keeps its name.
func TestReservedNames(t *testing.T) {
	s, _ := newTestService(t)
	ctx := context.Background()
	admin, err := s.EnsureAdmin(ctx, "ADMINKEY0123456789AB", "secret")
	if err != nil || admin.Name != "admin" || admin.DisplayName != "admin" {
		t.Fatalf("admin %+v %v", admin, err)
	}
	for _, tc := range []struct{ name, email string }{
		{"admin", "x1@example.com"},
		{"Admin", "x2@example.com"},
		{" ADMIN ", "x3@example.com"},
		{"ａｄｍｉｎ", "x4@example.com"},          // fullwidth
		{"аdmin", "x5@example.com"},          // Cyrillic а
		{"adm1n", "x6@example.com"},          // digit one
		{"a.d.m.i.n", "x7@example.com"},      // separators
		{"ad\u200bmin", "x8@example.com"},    // zero-width space
		{"admín", "x9@example.com"},          // accent
		{"Administrator", "x10@example.com"}, // reserved words
		{"admin-ops", "x11@example.com"},     // the prefix
		{"root", "x12@example.com"},
		{"bob\u202e", "x13@example.com"}, // a right-to-left override
		{"x", "admin@example.com"},       // the display name is the address's local part
		{"x", "ADMIN@example.com"},
		{"x", "adrnin@example.com"}, // rn reads as m
		{"x", "root@example.com"},
		{"x", "Anonymous@example.com"},
		{"x", "someone@cairn.local"}, // the server's own domain
	} {
		_, err := s.CreateUser(ctx, NewUser{Name: tc.name, Email: tc.email})
		if !IsCode(err, InvalidUserField) {
			t.Errorf("create %q <%s>: %v, want InvalidUserField", tc.name, tc.email, err)
		}
	}
	for _, tc := range []struct{ name, email string }{
		{"Adam", "adam@example.com"},
		{"Admiral Ackbar", "admiral@example.com"},
		{"Ronald", "ronald@example.com"},
		{"Émile", "emile@example.com"},
		{"李雷", "lilei@example.com"},
	} {
		if _, err := s.CreateUser(ctx, NewUser{Name: tc.name, Email: tc.email}); err != nil {
			t.Errorf("create %q <%s>: %v", tc.name, tc.email, err)
		}
	}
	u, err := s.CreateUser(ctx, NewUser{Name: "Bob", Email: "bob@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	for _, up := range []UserUpdate{{Name: ptrTo("ADMIN")}, {Email: ptrTo("admin@evil.example")}, {Email: ptrTo("bob@cairn.local")}} {
		if _, err := s.UpdateUser(ctx, u.KeyID, up, true); !IsCode(err, InvalidUserField) {
			t.Errorf("update %+v: %v, want InvalidUserField", up, err)
		}
	}
	// The administrator may change other fields of its own record.
	if _, err := s.UpdateUser(ctx, admin.KeyID, UserUpdate{Name: ptrTo("admin"), NewKeySecret: true}, true); err != nil {
		t.Fatalf("the admin's own update: %v", err)
	}
}

func ptrTo(s string) *string { return &s }

func TestSkeleton(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"admin": "admln", "ADMIN": "admln", "Adm1n": "admln", "ａｄｍｉｎ": "admln", "аdmіn": "admln",
		"a d-m_i.n": "admln", "adrnin": "admln", "vvho": "who", "Émile": "emlle", "日本": "日本",
	} {
		if got := skeleton(in); got != want {
			t.Errorf("skeleton(%q) = %q, want %q", in, got, want)
		}
	}
}
