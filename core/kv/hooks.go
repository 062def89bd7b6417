package kv

import (
	"context"
	"crypto/sha1"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/index"
	"github.com/cairnkv/cairn/core/storage"
)

// HookObserver, when the Config's Observer also implements it, is told about hook
// failures (the reference's precommit_fail and postcommit_fail statistics).
type HookObserver interface {
	IncPrecommitFail()
	IncPostcommitFail()
}

// Defaults of the postcommit worker pool.
const (
	DefaultPostcommitWorkers = 4
	DefaultPostcommitQueue   = 4096
)

// postcommitJob is one committed write whose postcommit hooks have to run.
type postcommitJob struct {
	op    hooks.Op
	obj   *core.Object
	specs []core.HookSpec
}

// postcommitPool runs postcommit hooks on a fixed set of workers fed by a bounded queue.
// A write never waits for it: when the queue is full the job is dropped and counted as
// a failure. The Service owns it and stops it in Shutdown (or Close).
type postcommitPool struct {
	jobs chan postcommitJob
	wg   sync.WaitGroup
	// ctx is the context hooks run with; cancel ends it when a shutdown's deadline
	// passes, which stops the running hooks and makes the workers skip the queued jobs.
	ctx    context.Context
	cancel context.CancelFunc
	// dropped counts jobs refused because the queue was full or skipped because the
	// service shut down first; abandoned counts the latter only.
	dropped, abandoned atomic.Int64
}

// postcommitCancelGrace bounds how long Shutdown waits, after cancelling the running
// postcommit hooks, for the workers to return: a hook that ignores its context cannot
// hold the shutdown longer than this.
const postcommitCancelGrace = time.Second

func (s *Service) startPostcommit() {
	n := s.cfg.PostcommitWorkers
	if n <= 0 {
		n = DefaultPostcommitWorkers
	}
	q := s.cfg.PostcommitQueue
	if q <= 0 {
		q = DefaultPostcommitQueue
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.post = &postcommitPool{jobs: make(chan postcommitJob, q), ctx: ctx, cancel: cancel}
	for range n {
		s.post.wg.Add(1)
		go func() {
			defer s.post.wg.Done()
			for job := range s.post.jobs {
				if ctx.Err() != nil {
					s.post.abandoned.Add(1)
					s.post.dropped.Add(1)
					continue
				}
				s.runPostcommit(ctx, job)
			}
		}()
	}
}

// stopPostcommit closes the queue and lets the workers run the queued jobs until ctx
// ends; then it cancels the running hooks, drops the jobs still queued (counted in
// PostcommitDropped and logged), and waits at most postcommitCancelGrace more.
func (s *Service) stopPostcommit(ctx context.Context) error {
	if s.post == nil {
		return nil
	}
	s.postMu.Lock()
	if !s.postClosed {
		s.postClosed = true
		close(s.post.jobs)
	}
	s.postMu.Unlock()
	done := make(chan struct{})
	go func() { // ends when the workers do; the pool owns them
		s.post.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		s.post.cancel()
		return nil
	case <-ctx.Done():
	}
	s.post.cancel()
	for range s.post.jobs { // the workers may be stuck in a hook: count the rest here
		s.post.abandoned.Add(1)
		s.post.dropped.Add(1)
	}
	var err error
	select {
	case <-done:
	case <-time.After(postcommitCancelGrace):
		err = fmt.Errorf("kv: shutdown: postcommit hooks still running %v after their cancellation", postcommitCancelGrace)
	}
	if n := s.post.abandoned.Load(); n > 0 {
		s.log.Warn("kv: shutdown: postcommit hooks not run before the shutdown deadline; dropped", "writes", n)
	}
	return err
}

// queuePostcommit hands a committed write to the postcommit workers without waiting.
func (s *Service) queuePostcommit(p *core.BucketProps, op hooks.Op, obj *core.Object) {
	if len(p.Postcommit) == 0 || s.cfg.Hooks == nil {
		return
	}
	s.postMu.RLock()
	defer s.postMu.RUnlock()
	if s.postClosed {
		return
	}
	select {
	case s.post.jobs <- postcommitJob{op: op, obj: obj, specs: p.Postcommit}:
	default:
		s.post.dropped.Add(1)
		for range p.Postcommit {
			s.postcommitFailed()
		}
		s.log.Warn("postcommit queue full: hooks skipped", "bucket", obj.Bucket, "key", obj.Key)
	}
}

func (s *Service) runPostcommit(ctx context.Context, job postcommitJob) {
	for _, spec := range job.specs {
		h, err := s.cfg.Hooks.Postcommit(spec)
		if err == nil {
			err = h.Postcommit(ctx, job.op, job.obj)
		}
		if err != nil {
			s.postcommitFailed()
			s.log.Warn("postcommit hook failed", "hook", hookName(spec), "bucket", job.obj.Bucket,
				"key", job.obj.Key, "err", err)
		}
	}
}

func (s *Service) postcommitFailed() {
	if o, ok := s.cfg.Observer.(HookObserver); ok {
		o.IncPostcommitFail()
	}
}

func (s *Service) precommitFailed() {
	if o, ok := s.cfg.Observer.(HookObserver); ok {
		o.IncPrecommitFail()
	}
}

// PostcommitDropped returns how many writes had their postcommit hooks skipped because
// the queue was full or the service shut down before they ran.
func (s *Service) PostcommitDropped() int64 {
	if s.post == nil {
		return 0
	}
	return s.post.dropped.Load()
}

func hookName(spec core.HookSpec) string {
	if spec.Mod == "" {
		return spec.Name
	}
	return spec.Mod + ":" + spec.Fun
}

// runPrecommit runs the bucket's precommit hooks in order on obj (the value being written,
// or a tombstone for a delete). It returns the sibling to store: v itself, or the last
// hook's replacement. A rejection is EFORBIDDEN with the hook's reason; a failing hook is
// EINTERNAL with a message naming it. Nothing is stored in either case.
func (s *Service) runPrecommit(ctx context.Context, p *core.BucketProps, op hooks.Op, typ, bucket, key string,
	clock []byte, v core.Sibling) (core.Sibling, error) {
	if len(p.Precommit) == 0 || s.cfg.Hooks == nil {
		return v, nil // before the method value is made: a PUT without hooks pays nothing
	}
	return s.runPrecommitChain(ctx, p, op, typ, bucket, key, clock, v, s.replacement)
}

// replaceFunc judges a precommit hook's replacement r of the value orig it was given and
// returns the sibling to go on with; its error completes "precommit hook M:F …".
type replaceFunc func(r *core.Object, orig core.Sibling) (core.Sibling, error)

// runPrecommitChain is runPrecommit with the judge of replacements given: replace.
func (s *Service) runPrecommitChain(ctx context.Context, p *core.BucketProps, op hooks.Op, typ, bucket, key string,
	clock []byte, v core.Sibling, replace replaceFunc) (core.Sibling, error) {
	if len(p.Precommit) == 0 || s.cfg.Hooks == nil {
		return v, nil
	}
	for _, spec := range p.Precommit {
		obj := &core.Object{Type: typ, Bucket: bucket, Key: key, VClock: clock, Siblings: []core.Sibling{v}}
		h, err := s.cfg.Hooks.Precommit(spec)
		if err != nil {
			s.precommitFailed()
			return v, &core.Error{Code: core.EINTERNAL, Message: fmt.Sprintf(
				"precommit hook %s cannot run: %v\n", hookName(spec), err)}
		}
		verdict, err := h.Precommit(ctx, op, obj)
		if err != nil {
			s.precommitFailed()
			var ce *hooks.CallError
			if errors.Is(err, core.ErrClientBusy) {
				// This client's share of the runtime is in use: busy, not broken.
				return v, &core.Error{Code: core.EUNAVAILABLE, Message: fmt.Sprintf(
					"precommit hook %s cannot run now: %v\n", hookName(spec), errors.Unwrap(err))}
			}
			if errors.As(err, &ce) {
				return v, &core.Error{Code: core.EINTERNAL, Message: fmt.Sprintf(
					"precommit hook %s %s: %v\n", hookName(spec), ce.Kind, ce.Err)}
			}
			return v, &core.Error{Code: core.EINTERNAL, Message: fmt.Sprintf(
				"precommit hook %s failed: %v\n", hookName(spec), err)}
		}
		if verdict.Reject {
			s.precommitFailed()
			reason := verdict.Reason
			if reason == "" {
				reason = fmt.Sprintf("%s aborted by pre-commit hook.", opMethod(op))
			}
			return v, &core.Error{Code: core.EFORBIDDEN, Message: reason}
		}
		if verdict.Replace != nil && op == hooks.OpPut {
			nv, err := replace(verdict.Replace, v)
			if err != nil {
				s.precommitFailed()
				return v, &core.Error{Code: core.EINTERNAL, Message: fmt.Sprintf(
					"precommit hook %s %v\n", hookName(spec), err)}
			}
			v = nv
		}
	}
	return v, nil
}

func opMethod(op hooks.Op) string {
	if op == hooks.OpDelete {
		return "DELETE"
	}
	return "PUT"
}

// replacement validates a precommit's replacement object and returns its value as the
// sibling to store. The place and clock stay the host's; the hook may change the value,
// the content type and its parameters, user metadata, links and index entries.
func (s *Service) replacement(o *core.Object, orig core.Sibling) (core.Sibling, error) {
	v, err := s.checkReplacement(o, orig)
	if err != nil {
		return orig, fmt.Errorf("returned an invalid object: %w", err)
	}
	return v, nil
}

// checkReplacement is replacement without the error's context.
func (s *Service) checkReplacement(o *core.Object, orig core.Sibling) (core.Sibling, error) {
	if len(o.Siblings) == 0 {
		return orig, errors.New("it has no value")
	}
	r := o.Siblings[0]
	if r.ContentType == "" {
		return orig, errors.New("it has no content type")
	}
	if n := int64(len(r.Value)); n > s.cfg.MaxValueSize {
		return orig, fmt.Errorf("its value of %d bytes is above the maximum of %d", n, s.cfg.MaxValueSize)
	}
	idx := index.Normalize(append([]core.IndexEntry(nil), r.Indexes...))
	for _, e := range idx {
		if _, err := index.EncodeTerm(e.Field, e.Value); err != nil {
			return orig, fmt.Errorf("index %s=%q: %w", e.Field, e.Value, err)
		}
	}
	v := core.Sibling{
		Value: r.Value, ContentType: r.ContentType, Charset: r.Charset, Encoding: r.Encoding,
		Meta: r.Meta, Links: r.Links, Indexes: idx,
	}
	if err := s.CheckHeaders(&v); err != nil {
		return orig, errors.New(strings.TrimSuffix(core.AsError(err).Message, "\n"))
	}
	return v, nil
}

// checkHooks resolves the hook properties among the normalised changes; each one that
// names an unknown module or function gets a reason. Without a registry (no runtimes)
// only the shape is checked.
func (s *Service) checkHooks(norm map[string]json.RawMessage, reasons map[string]string) {
	if s.cfg.Hooks == nil {
		return
	}
	check := func(name string, spec core.HookSpec, p hooks.Point) bool {
		if err := s.cfg.Hooks.Validate(spec, p); err != nil {
			reasons[name] = fmt.Sprintf("unknown_hook: %s: %v", hookName(spec), err)
			return false
		}
		return true
	}
	for name, raw := range norm {
		switch name {
		case core.PropPrecommit, core.PropPostcommit:
			point := hooks.PointPrecommit
			if name == core.PropPostcommit {
				point = hooks.PointPostcommit
			}
			list, _ := parseHookList(raw)
			for _, spec := range list {
				if !check(name, spec, point) {
					break
				}
			}
		case core.PropChashKeyfun:
			if spec, err := parseModFun(raw); err == nil {
				check(name, spec, hooks.PointKeyFun)
			}
		case core.PropLinkfun:
			if spec, err := parseLinkfun(raw); err == nil && (spec.Mod != "" || spec.Name != "") {
				check(name, spec, hooks.PointLinkFun)
			}
		}
	}
	for name := range reasons {
		delete(norm, name)
	}
}

// RingSize is the number of partitions of the placement ring.
const RingSize = 64

// PreflistEntry is one replica's place: a partition of the ring and the node owning it.
type PreflistEntry struct {
	Partition int    `json:"partition"`
	Node      string `json:"node"`
	Primary   bool   `json:"primary"`
}

// Preflist returns the n_val partitions that hold typ/bucket/key: the key's placement
// hash (the bucket's chash_keyfun; SHA-1 of the bucket and key by default) falls in one
// partition of a RingSize-partition ring, and the replicas go to the next n_val
// partitions, all owned by this node.
func (s *Service) Preflist(ctx context.Context, typ, bucket, key string) ([]PreflistEntry, error) {
	p, err := s.Props(ctx, typ, bucket)
	if err != nil {
		return nil, err
	}
	hash, err := s.keyHash(ctx, p, typ, bucket, key)
	if err != nil {
		return nil, err
	}
	first := firstPartition(hash)
	n := min(p.NVal, RingSize) // the typed view already clamps n_val; never size by more
	out := make([]PreflistEntry, 0, n)
	for i := range n {
		out = append(out, PreflistEntry{Partition: (first + i) % RingSize, Node: s.cfg.NodeName, Primary: true})
	}
	return out, nil
}

// keyHash computes the placement hash with the bucket's chash_keyfun.
func (s *Service) keyHash(ctx context.Context, p *core.BucketProps, typ, bucket, key string) ([]byte, error) {
	if p.ChashKeyfun == nil || s.cfg.Hooks == nil {
		sum := sha1.Sum([]byte(typ + "\x00" + bucket + "\x00" + key))
		return sum[:], nil
	}
	kf, err := s.cfg.Hooks.KeyFun(*p.ChashKeyfun)
	if err != nil {
		return nil, &core.Error{Code: core.EINTERNAL, Message: fmt.Sprintf(
			"chash_keyfun %s cannot run: %v\n", hookName(*p.ChashKeyfun), err)}
	}
	h, err := kf.KeyHash(ctx, typ, bucket, key)
	if err != nil {
		return nil, &core.Error{Code: core.EINTERNAL, Message: fmt.Sprintf(
			"chash_keyfun %s failed: %v\n", hookName(*p.ChashKeyfun), err)}
	}
	if len(h) == 0 || len(h) > 20 {
		return nil, &core.Error{Code: core.EINTERNAL, Message: fmt.Sprintf(
			"chash_keyfun %s returned %d bytes, not 1 to 20\n", hookName(*p.ChashKeyfun), len(h))}
	}
	return h, nil
}

// firstPartition returns the first partition of a hash's preference list: as in the
// reference ring, the partition after the one whose range holds the hash. The hash is
// the high-order end of a 160-bit big-endian ring position (shorter hashes are padded
// with zero bytes on the right), so a keyfun returning 8 bytes spreads keys over the
// whole ring.
func firstPartition(hash []byte) int {
	var pos [20]byte
	copy(pos[:], hash)
	x := new(big.Int).SetBytes(pos[:])
	inc := new(big.Int).Lsh(big.NewInt(1), 160)
	inc.Div(inc, big.NewInt(RingSize))
	q := new(big.Int).Div(x, inc)
	return int((q.Int64() + 1) % RingSize)
}

// ModuleReferences returns where stored bucket and bucket-type properties name module
// mod (plain or pinned to a runtime, "wasm:mod"), e.g. "bucket default/users precommit".
func (s *Service) ModuleReferences(ctx context.Context, mod string) ([]string, error) {
	var refs []string
	for _, tag := range []byte{storage.TagType, storage.TagProps} {
		it := s.db.IteratePrefix([]byte{tag})
		for it.Next() {
			_, comps, err := storage.DecodeKey(it.Key())
			if err != nil {
				continue
			}
			var raw map[string]json.RawMessage
			if json.Unmarshal(it.Value(), &raw) != nil {
				continue
			}
			where := "bucket type " + string(comps[0])
			if tag == storage.TagProps && len(comps) == 2 {
				where = "bucket " + string(comps[0]) + "/" + string(comps[1])
			}
			for _, prop := range []string{core.PropPrecommit, core.PropPostcommit, core.PropChashKeyfun, core.PropLinkfun} {
				if namesModule(raw[prop], mod) {
					refs = append(refs, where+" "+prop)
				}
			}
		}
		err := it.Err()
		it.Release()
		if err != nil {
			return nil, fmt.Errorf("kv: module references: %w", err)
		}
	}
	return refs, nil
}

// namesModule reports whether a hook property (a list of specs or one spec) names mod.
func namesModule(raw json.RawMessage, mod string) bool {
	if len(raw) == 0 {
		return false
	}
	specs, err := parseHookList(raw)
	if err != nil {
		spec, err := parseModFun(raw)
		if err != nil {
			return false
		}
		specs = []core.HookSpec{spec}
	}
	for _, spec := range specs {
		if spec.Mod == mod || spec.Mod == hooks.KindWASM+":"+mod || spec.Mod == hooks.KindPlugin+":"+mod {
			return true
		}
	}
	return false
}
