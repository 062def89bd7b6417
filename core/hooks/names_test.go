package hooks_test

import (
	"strings"
	"testing"

	"github.com/cairnkv/cairn/core/hooks"
)

func TestValidModuleName(t *testing.T) {
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"a", true},
		{"audit.v2", true},
		{"A_b-c.9", true},
		{"x.", true},
		{"_x", true},
		{"9", true},
		{strings.Repeat("x", hooks.MaxModuleNameLen), true},
		{"", false},
		{".a", false},
		{"-a", false},
		{"a:b", false},
		{"a b", false},
		{"a/b", false},
		{"a\x00", false},
		{"é", false},
		{strings.Repeat("x", hooks.MaxModuleNameLen+1), false},
	} {
		if got := hooks.ValidModuleName(tt.name); got != tt.want {
			t.Errorf("ValidModuleName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
