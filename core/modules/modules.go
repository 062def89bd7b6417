// Package modules is the registry of extension modules: it stores registered modules in
// LevelDB (table 'm'), versioned by sha256, hands them to the runtime that runs them (the
// WebAssembly host, through hooks.Loader), reloads them at start, and refuses to remove a
// module that bucket properties still name.
//
// The runtime follows the store, not only this service's own calls: a module record
// that another writer of the store puts or deletes (another service over the same store;
// in a cluster, the replica applier) is loaded into, or removed from, the runtime by a
// background goroutine told by the store's change notifications (Close stops it).
package modules

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"github.com/cairnkv/cairn/core"
	"github.com/cairnkv/cairn/core/hooks"
	"github.com/cairnkv/cairn/core/storage"
)

// Config configures a Service.
type Config struct {
	// Loader runs the modules (the WebAssembly host). Required.
	Loader hooks.Loader
	// Registry is told to forget cached resolutions after every change, and tells which
	// runtime owns a name. Required.
	Registry *hooks.Registry
	// References returns where bucket or bucket-type properties name module name
	// (e.g. "bucket default/users precommit"); a module with references is not removed.
	References func(ctx context.Context, name string) ([]string, error)
	// Logger receives load failures at start (default slog.Default()).
	Logger *slog.Logger
}

// Service registers, stores and loads modules. It is safe for concurrent use.
type Service struct {
	db  storage.Store
	cfg Config

	// mu serialises changes (put, delete, and following the store) so that storage, the
	// loader and the registry change together.
	mu sync.Mutex
	// infos holds the info of every installed module, by name; guarded by mu.
	infos map[string]hooks.ModuleInfo

	// pendMu guards pending: the names of module records the store reported changed,
	// which follow has not looked at yet.
	pendMu  sync.Mutex
	pending map[string]bool
	wake    chan struct{} // capacity 1: pending has names
	stop    chan struct{} // closed by Close
	done    chan struct{} // closed when follow returns
	// unsubscribe cancels the subscription to the store's changes.
	unsubscribe func()
	closeOnce   sync.Once
}

// New returns a registry over db and starts following db's module records. Call
// LoadAll to install the stored modules, and Close to stop.
func New(db storage.Store, cfg Config) *Service {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &Service{db: db, cfg: cfg, infos: map[string]hooks.ModuleInfo{}, pending: map[string]bool{},
		wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.unsubscribe = db.Subscribe(s.noteChanges)
	go s.follow()
	return s
}

// Close stops following the store. The loaded modules stay loaded.
func (s *Service) Close() {
	s.closeOnce.Do(func() {
		s.unsubscribe()
		close(s.stop)
		<-s.done
	})
}

// noteChanges records the module records a commit changed (it runs in the store's
// commit path: it only notes them, follow acts).
func (s *Service) noteChanges(changes []storage.Change) {
	noted := false
	for _, c := range changes {
		if len(c.Key) == 0 || c.Key[0] != storage.TagModule {
			continue
		}
		_, comps, err := storage.DecodeKey(c.Key)
		if err != nil || len(comps) != 1 {
			continue
		}
		s.pendMu.Lock()
		s.pending[string(comps[0])] = true
		s.pendMu.Unlock()
		noted = true
	}
	if noted {
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// follow makes the runtime match the stored module records that changed, until Close.
func (s *Service) follow() {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case <-s.wake:
		}
		s.pendMu.Lock()
		names := make([]string, 0, len(s.pending))
		for name := range s.pending {
			names = append(names, name)
		}
		clear(s.pending)
		s.pendMu.Unlock()
		for _, name := range names {
			if err := s.sync(name); err != nil {
				s.cfg.Logger.Error("modules: cannot follow a stored module", "module", name, "err", err)
			}
		}
	}
}

// sync loads the stored version of module name into the runtime, or removes it from
// the runtime when it is no longer stored; nothing happens when the runtime already has
// what is stored (this service's own changes).
func (s *Service) sync(name string) error {
	ctx := context.Background()
	s.mu.Lock()
	defer s.mu.Unlock()
	v, err := s.db.Get(moduleKey(name))
	if errors.Is(err, storage.ErrNotFound) {
		if _, ok := s.infos[name]; !ok {
			return nil
		}
		delete(s.infos, name)
		s.cfg.Registry.Invalidate()
		return s.cfg.Loader.Remove(ctx, name)
	}
	if err != nil {
		return err
	}
	kind, code, err := decodeRecord(v)
	if err != nil {
		return err
	}
	if kind != s.cfg.Loader.Kind() {
		return fmt.Errorf("modules: no runtime of kind %q", kind)
	}
	sum := sha256.Sum256(code)
	if old, ok := s.infos[name]; ok && old.SHA256 == hex.EncodeToString(sum[:]) {
		return nil
	}
	info, err := s.cfg.Loader.Load(ctx, name, code)
	if err != nil {
		return err
	}
	s.infos[name] = info
	s.cfg.Registry.Invalidate()
	return nil
}

// Record layout: version byte (1), kind (uvarint length + bytes), code (the rest).
const recordVersion = 1

func moduleKey(name string) []byte { return storage.KeyString(storage.TagModule, name) }

func encodeRecord(kind string, code []byte) []byte {
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(kind)+len(code))
	b = append(b, recordVersion)
	b = binary.AppendUvarint(b, uint64(len(kind)))
	b = append(b, kind...)
	return append(b, code...)
}

func decodeRecord(v []byte) (kind string, code []byte, err error) {
	if len(v) == 0 || v[0] != recordVersion {
		return "", nil, errors.New("modules: corrupt module record")
	}
	n, k := binary.Uvarint(v[1:])
	if k <= 0 || uint64(len(v)-1-k) < n {
		return "", nil, errors.New("modules: corrupt module record")
	}
	start := 1 + k
	return string(v[start : start+int(n)]), v[start+int(n):], nil
}

func errBadName(name string) error {
	return &core.Error{Code: core.EINVALID, Message: fmt.Sprintf(
		"invalid module name %q: use 1 to %d characters from A-Z a-z 0-9 _ . - (not starting with . or -)\n", name, hooks.MaxModuleNameLen)}
}

func errNoModule(name string) error {
	return &core.Error{Code: core.ENOTFOUND, Message: fmt.Sprintf("no module named %q\n", name)}
}

// LoadAll installs every stored module. A module that fails to load is logged and
// skipped (it stays stored, so a later server version may load it).
func (s *Service) LoadAll(ctx context.Context) error {
	it := s.db.IteratePrefix([]byte{storage.TagModule})
	defer it.Release()
	s.mu.Lock()
	defer s.mu.Unlock()
	for it.Next() {
		_, comps, err := storage.DecodeKey(it.Key())
		if err != nil || len(comps) != 1 {
			s.cfg.Logger.Error("modules: skipping a corrupt module key", "err", err)
			continue
		}
		name := string(comps[0])
		kind, code, err := decodeRecord(append([]byte(nil), it.Value()...))
		if err == nil && kind != s.cfg.Loader.Kind() {
			err = fmt.Errorf("modules: no runtime of kind %q", kind)
		}
		if err != nil {
			s.cfg.Logger.Error("modules: cannot load stored module", "module", name, "err", err)
			continue
		}
		info, err := s.cfg.Loader.Load(ctx, name, code)
		if err != nil {
			s.cfg.Logger.Error("modules: cannot load stored module", "module", name, "err", err)
			continue
		}
		s.infos[name] = info
	}
	s.cfg.Registry.Invalidate()
	if err := it.Err(); err != nil {
		return fmt.Errorf("modules: load: %w", err)
	}
	return nil
}

// Put registers module name with code, replacing an earlier version. It reports whether
// the module is new. Invalid code is an EINVALID *core.Error with the reason; a name
// that another runtime already has is ECONFLICT.
func (s *Service) Put(ctx context.Context, name string, code []byte) (hooks.ModuleInfo, bool, error) {
	if !hooks.ValidModuleName(name) {
		return hooks.ModuleInfo{}, false, errBadName(name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if owner := s.cfg.Registry.Owner(name); owner != "" && owner != s.cfg.Loader.Kind() {
		return hooks.ModuleInfo{}, false, &core.Error{Code: core.ECONFLICT, Message: fmt.Sprintf(
			"the name %q belongs to a %s module; choose another name\n", name, owner)}
	}
	_, existed := s.infos[name]
	sum := sha256.Sum256(code)
	if old, ok := s.infos[name]; ok && old.SHA256 == hex.EncodeToString(sum[:]) {
		return old, false, nil // the same bytes again: nothing changes
	}
	info, err := s.cfg.Loader.Load(ctx, name, code)
	if err != nil {
		var inv *hooks.InvalidModuleError
		if errors.As(err, &inv) {
			return hooks.ModuleInfo{}, false, &core.Error{Code: core.EINVALID, Message: "invalid module: " + inv.Reason + "\n"}
		}
		return hooks.ModuleInfo{}, false, fmt.Errorf("modules: put %s: %w", name, err)
	}
	if err := storage.Put(ctx, s.db, moduleKey(name), encodeRecord(s.cfg.Loader.Kind(), code), true); err != nil {
		// Storage failed: keep the runtime consistent with what is stored.
		if prev, ok := s.stored(name); ok {
			_, _ = s.cfg.Loader.Load(ctx, name, prev)
		} else {
			_ = s.cfg.Loader.Remove(ctx, name)
		}
		return hooks.ModuleInfo{}, false, fmt.Errorf("modules: put %s: %w", name, err)
	}
	s.infos[name] = info
	s.cfg.Registry.Invalidate()
	return info, !existed, nil
}

// stored returns the stored code of name.
func (s *Service) stored(name string) ([]byte, bool) {
	v, err := s.db.Get(moduleKey(name))
	if err != nil {
		return nil, false
	}
	_, code, err := decodeRecord(v)
	return code, err == nil
}

// Get returns the info and code of module name.
func (s *Service) Get(ctx context.Context, name string) (hooks.ModuleInfo, []byte, error) {
	s.mu.Lock()
	info, ok := s.infos[name]
	s.mu.Unlock()
	if !ok {
		return hooks.ModuleInfo{}, nil, errNoModule(name)
	}
	code, ok := s.stored(name)
	if !ok {
		return hooks.ModuleInfo{}, nil, errNoModule(name)
	}
	return info, code, nil
}

// List returns the installed modules sorted by name.
func (s *Service) List(ctx context.Context) []hooks.ModuleInfo {
	s.mu.Lock()
	out := make([]hooks.ModuleInfo, 0, len(s.infos))
	for _, info := range s.infos {
		out = append(out, info)
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Delete removes module name. It is ENOTFOUND when there is no such module and
// ECONFLICT, naming the properties, while bucket or type properties name it.
func (s *Service) Delete(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.infos[name]; !ok {
		if _, stored := s.stored(name); !stored {
			return errNoModule(name)
		}
	}
	if s.cfg.References != nil {
		refs, err := s.cfg.References(ctx, name)
		if err != nil {
			return fmt.Errorf("modules: delete %s: %w", name, err)
		}
		if len(refs) > 0 {
			msg := fmt.Sprintf("module %q is still named by bucket properties:\n", name)
			for _, r := range refs {
				msg += "  " + r + "\n"
			}
			return &core.Error{Code: core.ECONFLICT, Message: msg}
		}
	}
	if err := storage.Delete(ctx, s.db, moduleKey(name), true); err != nil {
		return fmt.Errorf("modules: delete %s: %w", name, err)
	}
	delete(s.infos, name)
	s.cfg.Registry.Invalidate()
	if err := s.cfg.Loader.Remove(ctx, name); err != nil {
		return fmt.Errorf("modules: delete %s: %w", name, err)
	}
	return nil
}
