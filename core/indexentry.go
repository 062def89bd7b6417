package core

import "strings"

// The order and the integer form of secondary-index entries, shared by the HTTP layer
// (which parses and formats index headers) and core/index (which stores postings).

// CompareIndexEntries orders index entries by field, then value; values of "_int"
// fields compare numerically (see CompareIntValues).
func CompareIndexEntries(a, b IndexEntry) int {
	if c := strings.Compare(a.Field, b.Field); c != 0 {
		return c
	}
	if strings.HasSuffix(a.Field, "_int") {
		return CompareIntValues(a.Value, b.Value)
	}
	return strings.Compare(a.Value, b.Value)
}

// CanonicalInt returns the canonical decimal form of an integer written with an
// optional sign and at least one decimal digit, as Erlang's list_to_integer accepts.
func CanonicalInt(s string) (string, bool) {
	neg := false
	digits := s
	if digits != "" && (digits[0] == '+' || digits[0] == '-') {
		neg = digits[0] == '-'
		digits = digits[1:]
	}
	if digits == "" {
		return "", false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return "", false
		}
	}
	z := 0
	for z < len(digits)-1 && digits[z] == '0' {
		z++
	}
	digits = digits[z:]
	if digits == "0" {
		return "0", true
	}
	if neg {
		if z == 0 && len(s) == len(digits)+1 {
			return s, true // already canonical: no allocation
		}
		return "-" + digits, true
	}
	return digits, true
}

// CompareIntValues compares two canonical decimal integers numerically. Values that are
// not integers sort after all integers, bytewise among themselves.
func CompareIntValues(a, b string) int {
	ca, oka := CanonicalInt(a)
	cb, okb := CanonicalInt(b)
	switch {
	case !oka && !okb:
		return strings.Compare(a, b)
	case !oka:
		return 1
	case !okb:
		return -1
	}
	na, nb := ca[0] == '-', cb[0] == '-'
	if na != nb {
		if na {
			return -1
		}
		return 1
	}
	c := 0
	if na {
		ca, cb = ca[1:], cb[1:]
	}
	switch {
	case len(ca) != len(cb):
		c = -1
		if len(ca) > len(cb) {
			c = 1
		}
	default:
		c = strings.Compare(ca, cb)
	}
	if na {
		c = -c
	}
	return c
}
