package kvapi

import (
	"net/url"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core"
)

// TestTimeoutParamsBounded: a timeout that would overflow a time.Duration (issue 15: every
// number a client sends is bounded) is a 400, on object requests and on listings alike.
func TestTimeoutParamsBounded(t *testing.T) {
	tests := []struct {
		v          string
		object     time.Duration // -1: refused
		listing    time.Duration
		wantErrTxt string
	}{
		{"1", time.Millisecond, time.Millisecond, ""},
		{"0", -1, 0, `Bad timeout value "0"` + "\n"},
		{"4294967295", 4294967295 * time.Millisecond, 4294967295 * time.Millisecond, ""},
		{"4294967296", -1, -1, `Bad timeout value "4294967296"` + "\n"},
		{"9223372036854775807", -1, -1, `Bad timeout value "9223372036854775807"` + "\n"},
		{"9223372036854775808", -1, -1, `Bad timeout value "9223372036854775808"` + "\n"},
		{"-1", -1, -1, `Bad timeout value "-1"` + "\n"},
	}
	for _, tt := range tests {
		q := &queryArgs{}
		q.parse("timeout=" + url.QueryEscape(tt.v))
		p, err := parseParams(q)
		checkTimeout(t, "object "+tt.v, p.timeout, err, tt.object, tt.wantErrTxt)
		lp, err := parseListParams(q, "keys")
		checkTimeout(t, "listing "+tt.v, lp.timeout, err, tt.listing, tt.wantErrTxt)
	}
}

func checkTimeout(t *testing.T, name string, got time.Duration, err error, want time.Duration, errTxt string) {
	t.Helper()
	if want < 0 {
		if e := core.AsError(err); e == nil || e.Code != core.EINVALID || e.Message != errTxt {
			t.Errorf("%s: %v, want 400 %q", name, err, errTxt)
		}
		return
	}
	if err != nil || got != want {
		t.Errorf("%s: %v, %v; want %v", name, got, err, want)
	}
}
