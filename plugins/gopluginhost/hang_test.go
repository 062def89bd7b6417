package gopluginhost

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cairnkv/cairn/core/hooks"
)

// The short deadline of the point a test calls "hang" at. The other points keep
// testConfig's long deadlines, so the calls that must answer do on a loaded machine.
const hangDeadline = 200 * time.Millisecond

// hangConfig returns testConfig with a short deadline at point pt and HangAfter n (0
// leaves the default).
func hangConfig(logger *slog.Logger, pt hooks.Point, n int, plugins ...PluginConfig) Config {
	cfg := testConfig(logger, plugins...)
	cfg.Timeouts[pt] = hangDeadline
	cfg.Timeouts[hooks.PointMap] = 20 * time.Second
	cfg.HangAfter = n
	return cfg
}

// callHang calls the "hang" function of plugin tp at pt (precommit or chash_keyfun)
// under ctx; the plugin never answers it.
func callHang(t testing.TB, ctx context.Context, h *Host, pt hooks.Point) error {
	t.Helper()
	switch pt {
	case hooks.PointPrecommit:
		_, err := lookup[hooks.Precommit](t, h, "tp", "hang", pt).Precommit(ctx, hooks.OpPut, sampleObject())
		return err
	case hooks.PointKeyFun:
		_, err := lookup[hooks.KeyFun](t, h, "tp", "hang", pt).KeyHash(ctx, "default", "b", "k")
		return err
	}
	t.Fatalf("callHang at %s", pt)
	return nil
}

// hangTimesOut calls "hang" at pt and checks that the call ran past the point's own
// deadline.
func hangTimesOut(t testing.TB, h *Host, pt hooks.Point) {
	t.Helper()
	if err := callHang(t, context.Background(), h, pt); callKind(err) != hooks.TimedOut {
		t.Fatalf("hang at %s: err = %v, want timed out", pt, err)
	}
}

// checkAlive fails the test unless plugin tp still runs process pid, with no hang
// counted.
func checkAlive(t testing.TB, h *Host, pid int, when string) {
	t.Helper()
	ps := statsOf(t, h, "tp")
	if ps.Hangs != 0 || ps.PID != pid || processGone(pid) {
		t.Fatalf("%s: process %d was killed (hangs %d, now pid %d)", when, pid, ps.Hangs, ps.PID)
	}
}

// keyHashWorks checks that plugin tp answers a chash_keyfun call.
func keyHashWorks(t testing.TB, h *Host) {
	t.Helper()
	kf := lookup[hooks.KeyFun](t, h, "tp", "sha1", hooks.PointKeyFun)
	if _, err := kf.KeyHash(context.Background(), "default", "b", "k"); err != nil {
		t.Fatalf("sha1: %v", err)
	}
}

func TestHangKillsProcess(t *testing.T) {
	logger, logs := newCapture()
	h := newHost(t, hangConfig(logger, hooks.PointPrecommit, 3, tp(t, "tp")))
	pid := waitUp(t, h, "tp", 0)
	for i := 1; i <= 3; i++ {
		hangTimesOut(t, h, hooks.PointPrecommit)
		if i < 3 {
			checkAlive(t, h, pid, strconv.Itoa(i)+" timeouts")
		}
	}
	// The third timeout killed the process at once...
	if n := statsOf(t, h, "tp").Hangs; n != 1 {
		t.Fatalf("hangs = %d after 3 timeouts, want 1", n)
	}
	waitFor(t, 30*time.Second, "the hung process to be gone", func() bool { return processGone(pid) })
	// ... and the supervisor started a new one, which serves the other functions.
	newPID := waitUp(t, h, "tp", pid)
	keyHashWorks(t, h)
	ps := statsOf(t, h, "tp")
	if ps.Hangs != 1 || ps.Crashes != 1 || ps.Failures[hooks.TimedOut] != 3 || ps.PID != newPID {
		t.Errorf("stats: %+v", ps)
	}
	if !strings.Contains(ps.LastError, "hung") || !strings.Contains(ps.LastError, strconv.Itoa(pid)) {
		t.Errorf("last error %q does not say that process %d hung", ps.LastError, pid)
	}
	recs := logs.find("plugin hung")
	if len(recs) != 1 {
		t.Fatalf("hang logged %d times, want once: %+v", len(recs), recs)
	}
	r := recs[0]
	if r.level != slog.LevelError || r.attrs["plugin"] != "tp" || r.attrs["calls"] != "3" ||
		r.attrs["deadline"] != hangDeadline.String() || r.attrs["pid"] != strconv.Itoa(pid) {
		t.Errorf("hang logged as %+v", r)
	}
}

func TestHangCountResets(t *testing.T) {
	h := newHost(t, hangConfig(nil, hooks.PointKeyFun, 3, tp(t, "tp")))
	pid := waitUp(t, h, "tp", 0)
	precommit := func(t *testing.T, fun string) (hooks.Verdict, error) {
		return lookup[hooks.Precommit](t, h, "tp", fun, hooks.PointPrecommit).Precommit(context.Background(), hooks.OpPut, sampleObject())
	}
	mapOne := func(t *testing.T, keyData string) error {
		ms := openStream(t, h, "tp", "echo")
		defer ms.Close()
		if err := ms.Send(hooks.MapInput{Object: sampleObject(), KeyData: json.RawMessage(keyData)}); err != nil {
			return err
		}
		_, err := ms.Recv()
		return err
	}
	hangTimesOut(t, h, hooks.PointKeyFun)
	hangTimesOut(t, h, hooks.PointKeyFun)
	// Each answer of the plugin starts the count again: two more timeouts after it
	// would make four in a row without it.
	for _, tt := range []struct {
		name   string
		answer func(t *testing.T) error
		kind   hooks.CallErrorKind
	}{
		{"result", func(t *testing.T) error { _, err := precommit(t, "accept"); return err }, -1},
		{"rejection", func(t *testing.T) error {
			if v, err := precommit(t, "reject"); err != nil || !v.Reject {
				return errors.Join(err, errors.New("not rejected"))
			}
			return nil
		}, -1},
		{"the plugin's error", func(t *testing.T) error { _, err := precommit(t, "error"); return err }, hooks.Failed},
		{"map output", func(t *testing.T) error { return mapOne(t, `"ok"`) }, -1},
		{"map input error", func(t *testing.T) error { return mapOne(t, `"fail"`) }, hooks.Failed},
		{"map returns an error", func(t *testing.T) error {
			_, err := lookup[hooks.Map](t, h, "tp", "error_stream", hooks.PointMap).Map(context.Background(), hooks.MapInput{Object: sampleObject()})
			return err
		}, hooks.Failed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.answer(t); callKind(err) != tt.kind || (tt.kind == -1 && err != nil) {
				t.Fatalf("answer: err = %v, want kind %d", err, tt.kind)
			}
			hangTimesOut(t, h, hooks.PointKeyFun)
			checkAlive(t, h, pid, "one timeout after "+tt.name)
			hangTimesOut(t, h, hooks.PointKeyFun)
			checkAlive(t, h, pid, "two timeouts after "+tt.name)
		})
	}
	// Without an answer, the third timeout kills.
	hangTimesOut(t, h, hooks.PointKeyFun)
	if n := statsOf(t, h, "tp").Hangs; n != 1 {
		t.Fatalf("hangs = %d after a third timeout, want 1", n)
	}
	waitUp(t, h, "tp", pid)
}

func TestHangDetectionOff(t *testing.T) {
	h := newHost(t, hangConfig(nil, hooks.PointPrecommit, -1, tp(t, "tp")))
	pid := waitUp(t, h, "tp", 0)
	for i := 1; i <= 4; i++ {
		hangTimesOut(t, h, hooks.PointPrecommit)
	}
	checkAlive(t, h, pid, "4 timeouts with HangAfter -1")
	keyHashWorks(t, h)
	if ps := statsOf(t, h, "tp"); ps.Crashes != 0 || ps.Failures[hooks.TimedOut] != 4 {
		t.Errorf("stats: %+v", ps)
	}
}

func TestHangCallerEnded(t *testing.T) {
	// A point deadline far beyond the caller's deadline and cancellation below.
	cfg := hangConfig(nil, hooks.PointPrecommit, 3, tp(t, "tp"))
	cfg.Timeouts[hooks.PointPrecommit] = 2 * time.Second
	h := newHost(t, cfg)
	pid := waitUp(t, h, "tp", 0)
	hangTimesOut(t, h, hooks.PointPrecommit)
	hangTimesOut(t, h, hooks.PointPrecommit)

	// Calls that end with their caller's context neither count nor start the count
	// again: the plugin did not answer them.
	ctx, cancel := context.WithCancel(context.Background())
	stop := time.AfterFunc(50*time.Millisecond, cancel)
	defer stop.Stop()
	if err := callHang(t, ctx, h, hooks.PointPrecommit); callKind(err) != hooks.Unavailable || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled: err = %v, want unavailable wrapping context.Canceled", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := callHang(t, ctx, h, hooks.PointPrecommit); callKind(err) != hooks.TimedOut {
		t.Fatalf("past the caller's deadline: err = %v, want timed out", err)
	}
	checkAlive(t, h, pid, "two timeouts and two calls the caller ended")

	hangTimesOut(t, h, hooks.PointPrecommit)
	if n := statsOf(t, h, "tp").Hangs; n != 1 {
		t.Fatalf("hangs = %d after a third timeout of the plugin's own, want 1", n)
	}
	waitUp(t, h, "tp", pid)
}

func TestHangMapStream(t *testing.T) {
	// The default HangAfter (3); each input of a map stream is a call.
	cfg := testConfig(nil, tp(t, "tp"))
	cfg.Timeouts[hooks.PointMap] = hangDeadline
	h := newHost(t, cfg)
	pid := waitUp(t, h, "tp", 0)
	for i := 1; i <= 2; i++ {
		ms := openStream(t, h, "tp", "hang")
		if err := ms.Send(hooks.MapInput{Object: sampleObject()}); err != nil {
			t.Fatal(err)
		}
		if _, err := ms.Recv(); callKind(err) != hooks.TimedOut {
			t.Fatalf("stream %d: Recv = %v, want timed out", i, err)
		}
		// The input that timed out counted once, whatever else the stream reports.
		if err := ms.Send(hooks.MapInput{Object: sampleObject()}); callKind(err) != hooks.TimedOut {
			t.Fatalf("stream %d: Send after the timeout = %v", i, err)
		}
		ms.Close()
		checkAlive(t, h, pid, strconv.Itoa(i)+" map inputs timed out")
	}
	// A unary Map past its deadline is the third.
	m := lookup[hooks.Map](t, h, "tp", "hang", hooks.PointMap)
	if _, err := m.Map(context.Background(), hooks.MapInput{Object: sampleObject()}); callKind(err) != hooks.TimedOut {
		t.Fatalf("Map = %v, want timed out", err)
	}
	if n := statsOf(t, h, "tp").Hangs; n != 1 {
		t.Fatalf("hangs = %d after 3 map inputs timed out, want 1", n)
	}
	waitUp(t, h, "tp", pid)
	keyHashWorks(t, h)
}

func TestHangCountIsPerProcess(t *testing.T) {
	h := newHost(t, hangConfig(nil, hooks.PointPrecommit, 3, tp(t, "tp")))
	pidA := waitUp(t, h, "tp", 0)
	hangTimesOut(t, h, hooks.PointPrecommit)
	hangTimesOut(t, h, hooks.PointPrecommit)
	if err := syscall.Kill(pidA, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The new process starts from zero: the timeouts of the old one are not its own.
	pidB := waitUp(t, h, "tp", pidA)
	hangTimesOut(t, h, hooks.PointPrecommit)
	checkAlive(t, h, pidB, "one timeout of a new process after two of the old")
	hangTimesOut(t, h, hooks.PointPrecommit)
	hangTimesOut(t, h, hooks.PointPrecommit)
	if ps := statsOf(t, h, "tp"); ps.Hangs != 1 {
		t.Fatalf("hangs = %d after 3 timeouts of the new process, want 1", ps.Hangs)
	}
	waitFor(t, 30*time.Second, "the hung process to be gone", func() bool { return processGone(pidB) })
	waitUp(t, h, "tp", pidB)
	if ps := statsOf(t, h, "tp"); ps.Crashes != 2 || ps.Hangs != 1 {
		t.Errorf("a kill from outside and a hang: %+v", ps)
	}
}

func TestHangConcurrentCallsKillOnce(t *testing.T) {
	h := newHost(t, hangConfig(nil, hooks.PointPrecommit, 3, tp(t, "tp")))
	pid := waitUp(t, h, "tp", 0)
	// HangAfter+2 calls at once: the third timeout kills the process; the two others
	// time out, find the connection broken or the plugin down, or (on a machine slow
	// to start them) reach the next process, too few to kill it.
	const n = 5
	pc := lookup[hooks.Precommit](t, h, "tp", "hang", hooks.PointPrecommit)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = pc.Precommit(context.Background(), hooks.OpPut, sampleObject()) })
	}
	wg.Wait()
	for i, err := range errs {
		if k := callKind(err); k != hooks.TimedOut && k != hooks.Crashed && k != hooks.Unavailable {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if ps := statsOf(t, h, "tp"); ps.Hangs != 1 {
		t.Fatalf("hangs = %d, want 1 (one process hung)", ps.Hangs)
	}
	waitUp(t, h, "tp", pid)
	keyHashWorks(t, h)
}
