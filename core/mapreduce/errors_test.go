package mapreduce

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestErrorJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		got  []byte
		want string
	}{
		{(&SetupError{Phase: 2, Message: `no "f" <here>`}).JSON(), `{"phase":2,"error":"no \"f\" <here>"}`},
		{(&PhaseError{Phase: 0, Message: "boom\n", Input: `["b","k"]`}).JSON(), `{"phase":0,"error":"boom\n","input":"[\"b\",\"k\"]"}`},
		{(&PhaseError{Phase: 1, Message: "too big"}).JSON(), `{"phase":1,"error":"too big"}`},
		{(&LimitError{Limit: 10}).JSON(), `{"error":"the results exceed 10 bytes; ask for them with ?chunked=true"}`},
		{ErrorJSON("bad \xff byte\u2028"), `{"error":"bad \ufffd byte\u2028"}`},
	} {
		if string(tc.got) != tc.want {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
		if !json.Valid(tc.got) {
			t.Errorf("%s is not JSON", tc.got)
		}
	}
	long := strings.Repeat("é", 400)
	if got := truncate(long); len(got) > maxErrorText+3 || !strings.HasSuffix(got, "...") || !json.Valid(ErrorJSON(got)) {
		t.Errorf("truncate: %q", got)
	}
}
