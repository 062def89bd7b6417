package wasmhost

import (
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/hooks"
)

// subscription encodes a WASI subscription: a clock (relative or absolute timeout),
// or a read or write of fd.
func subscription(userdata uint64, typ byte, fd uint32, timeout uint64, flags uint16) []byte {
	b := make([]byte, wasiSubscriptionSize)
	binary.LittleEndian.PutUint64(b, userdata)
	b[8] = typ
	if typ == wasiEventClock {
		binary.LittleEndian.PutUint32(b[16:], 1) // monotonic
		binary.LittleEndian.PutUint64(b[24:], timeout)
		binary.LittleEndian.PutUint16(b[40:], flags)
	} else {
		binary.LittleEndian.PutUint32(b[16:], fd)
	}
	return b
}

// TestPollOneoffDoesNotWait calls poll_oneoff through a guest: every subscription
// gets its event at once, an hour's clock included.
func TestPollOneoffDoesNotWait(t *testing.T) {
	h := newHost(t, Config{})
	load(t, h, "w", "wasi")
	hour := uint64(time.Hour)
	for _, tc := range []struct {
		name   string
		subs   [][]byte
		errno  uint32
		events []struct {
			errno uint16
			typ   byte
			flags uint16
		}
	}{
		{"relative clock", [][]byte{subscription(7, wasiEventClock, 0, hour, 0)}, 0,
			[]struct {
				errno uint16
				typ   byte
				flags uint16
			}{{0, wasiEventClock, 0}}},
		{"absolute clock", [][]byte{subscription(7, wasiEventClock, 0, hour, 1)}, 0,
			[]struct {
				errno uint16
				typ   byte
				flags uint16
			}{{0, wasiEventClock, 0}}},
		{"clock and descriptors", [][]byte{
			subscription(1, wasiEventClock, 0, hour, 0),
			subscription(2, wasiEventFdRead, 0, 0, 0),
			subscription(3, wasiEventFdWrite, 1, 0, 0),
			subscription(4, wasiEventFdWrite, 2, 0, 0),
			subscription(5, wasiEventFdRead, 9, 0, 0),
			subscription(6, wasiEventFdWrite, 0, 0, 0),
		}, 0, []struct {
			errno uint16
			typ   byte
			flags uint16
		}{
			{0, wasiEventClock, 0}, {0, wasiEventFdRead, wasiFdHangup}, {0, wasiEventFdWrite, 0},
			{0, wasiEventFdWrite, 0}, {wasiErrnoBadf, wasiEventFdRead, 0}, {wasiErrnoBadf, wasiEventFdWrite, 0},
		}},
		{"bad type", [][]byte{subscription(1, 9, 0, 0, 0)}, wasiErrnoInval, nil},
		{"none", nil, wasiErrnoInval, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in []byte
			for _, s := range tc.subs {
				in = append(in, s...)
			}
			start := time.Now()
			st, out, err := h.Call(context.Background(), "w", "poll", hooks.PointMap, in)
			if took := time.Since(start); took > 50*time.Millisecond {
				t.Errorf("poll_oneoff took %v", took)
			}
			if err != nil || st != 0 || len(out) != 8+32*len(tc.subs) {
				t.Fatalf("%d %d bytes %v", st, len(out), err)
			}
			le := binary.LittleEndian
			if errno := le.Uint32(out); errno != tc.errno {
				t.Fatalf("errno %d, want %d", errno, tc.errno)
			}
			if tc.errno != 0 {
				return
			}
			if n := le.Uint32(out[4:]); int(n) != len(tc.subs) {
				t.Errorf("%d events, want %d", n, len(tc.subs))
			}
			for i, want := range tc.events {
				ev := out[8+32*i:]
				if ud := le.Uint64(ev); ud != le.Uint64(tc.subs[i]) {
					t.Errorf("event %d: userdata %d", i, ud)
				}
				if e, typ, flags := le.Uint16(ev[8:]), ev[10], le.Uint16(ev[24:]); e != want.errno || typ != want.typ || flags != want.flags {
					t.Errorf("event %d: errno %d type %d flags %d, want %+v", i, e, typ, flags, want)
				}
			}
		})
	}
}

// TestStdinIsEmpty: fd_read of stdin reads end of file at once.
func TestStdinIsEmpty(t *testing.T) {
	h := newHost(t, Config{})
	load(t, h, "w", "wasi")
	start := time.Now()
	st, out, err := h.Call(context.Background(), "w", "read_stdin", hooks.PointMap, nil)
	if err != nil || st != 0 || len(out) != 8 {
		t.Fatalf("%d %q %v", st, out, err)
	}
	if errno, n := binary.LittleEndian.Uint32(out), binary.LittleEndian.Uint32(out[4:]); errno != 0 || n != 0 {
		t.Errorf("fd_read(stdin): errno %d, %d bytes; want 0 and 0", errno, n)
	}
	if took := time.Since(start); took > 50*time.Millisecond {
		t.Errorf("fd_read took %v", took)
	}
}

// TestGoGuestSleeps builds testdata/gosleep (a Go reactor whose goroutines sleep) and
// calls it: Go's scheduler waits for its timers in poll_oneoff, which returns at once,
// so the scheduler spins until they are due; a sleep within the deadline returns, one
// beyond it times out at the deadline.
func TestGoGuestSleeps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program for wasip1")
	}
	wasm := filepath.Join(t.TempDir(), "gosleep.wasm")
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-o", wasm, "./testdata/gosleep")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	code, err := os.ReadFile(wasm)
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, Config{Timeouts: map[hooks.Point]time.Duration{hooks.PointMap: 200 * time.Millisecond}})
	if _, err := h.Load(context.Background(), "sleepy", code); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ms      string
		timeout bool
	}{{"0", false}, {"30", false}, {"30", false}, {"5000", true}, {"50", false}} {
		start := time.Now()
		st, out, err := h.Call(context.Background(), "sleepy", "nap", hooks.PointMap, []byte(tc.ms))
		took := time.Since(start)
		switch {
		case tc.timeout && (callKind(err) != hooks.TimedOut || took > time.Second):
			t.Errorf("nap %s: %v after %v, want a timeout at 200ms", tc.ms, err, took)
		case !tc.timeout && (err != nil || st != 0 || string(out) != "awake"):
			t.Errorf("nap %s: %d %q %v after %v", tc.ms, st, out, err, took)
		}
		t.Logf("nap %s ms: %v", tc.ms, took)
	}
}
