package s3

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// A user's name and display name are shown to others (the display name in every ACL,
// bucket and object listing that names an owner or grantee), so no user may take one
// that reads as the administrator's or the server's own.

// reservedNames are the names no user but the server's own may take, as skeletons.
var reservedNames = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range []string{"admin", "administrator", "root", "superuser", "system", "cairn", "anonymous",
		"riak-cs", "store-cs"} {
		m[skeleton(n)] = true
	}
	return m
}()

// reservedPrefix is the skeleton no name may start with ("admin-2", "admin.ops"), so
// that no user looks like an administrator, earlier ones included.
var reservedPrefix = skeleton("admin")

// confusables maps characters that read as a Latin letter or digit to the character
// skeleton uses for it: Cyrillic and Greek look-alikes, and the digits and symbols
// that stand for letters.
var confusables = map[rune]rune{
	'а': 'a', 'е': 'e', 'о': 'o', 'р': 'p', 'с': 'c', 'х': 'x', 'у': 'y', 'і': 'l', 'ӏ': 'l', 'ј': 'j',
	'ԁ': 'd', 'һ': 'h', 'ѕ': 's', 'ԛ': 'q', 'ԝ': 'w', 'м': 'm', 'т': 't', 'к': 'k', 'н': 'h', 'в': 'b',
	'α': 'a', 'ε': 'e', 'ο': 'o', 'ρ': 'p', 'ι': 'l', 'κ': 'k', 'ν': 'v', 'τ': 't', 'υ': 'u', 'χ': 'x',
	'ı': 'l', 'i': 'l', '1': 'l', '|': 'l', '!': 'l', '0': 'o', '5': 's', '$': 's', '@': 'a', '3': 'e',
}

// skeleton is what a name reads as: compatibility-normalised (fullwidth and styled
// letters become plain ones), lower-cased, look-alike characters mapped to one letter
// (i, l, 1 and | all read as l), "rn" read as "m" and "vv" as "w", and everything but
// letters and digits dropped (spaces, punctuation, accents, invisible characters).
func skeleton(name string) string {
	name = norm.NFKD.String(strings.ToLower(norm.NFKC.String(name)))
	var b strings.Builder
	for _, c := range name {
		if m, ok := confusables[c]; ok {
			c = m
		}
		if unicode.IsLetter(c) || unicode.IsDigit(c) {
			b.WriteRune(c)
		}
	}
	s := strings.ReplaceAll(b.String(), "rn", "m")
	return strings.ReplaceAll(s, "vv", "w")
}

// checkShownName refuses a user name or display name (what is the field's name, for
// the message) that holds control or invisible formatting characters, or reads as a
// reserved name.
func checkShownName(what, name string) error {
	for _, c := range name {
		if unicode.IsControl(c) || unicode.Is(unicode.Cf, c) {
			return Errorf(InvalidUserField, "The %s must not contain the control or formatting character U+%04X", what, c)
		}
	}
	if sk := skeleton(name); reservedNames[sk] || strings.HasPrefix(sk, reservedPrefix) {
		return Errorf(InvalidUserField, "The %s %q is reserved: it reads as the administrator's or the server's own", what, name)
	}
	return nil
}
