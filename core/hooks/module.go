package hooks

import "context"

// ModuleInfo describes a registered extension module. The admin API serves it as JSON.
type ModuleInfo struct {
	// Name is the name the module is registered under.
	Name string `json:"name"`
	// Kind is the runtime that runs it (KindWASM, ...).
	Kind string `json:"kind"`
	// SHA256 is the lower-case hex SHA-256 of the module's bytes.
	SHA256 string `json:"sha256"`
	// Size is the module's size in bytes.
	Size int `json:"size"`
	// Functions lists the module's entry points, sorted.
	Functions []string `json:"functions"`
	// WASI reports whether the module imports wasi_snapshot_preview1.
	WASI bool `json:"wasi"`
	// Imports lists the module's function imports as "module.name", sorted.
	Imports []string `json:"imports"`
}

// InvalidModuleError is the error of a module refused at registration: its bytes are
// not a module, or not one the runtime can run. Reason is written for the client (the
// admin API answers 400 with it).
type InvalidModuleError struct {
	Reason string
}

// Error implements error.
func (e *InvalidModuleError) Error() string { return "invalid module: " + e.Reason }

// Loader is a runtime whose modules are installed while the server runs (the
// WebAssembly host): the module registry hands it the bytes of every registered module.
type Loader interface {
	// Kind names the runtime, as Provider.Kind does.
	Kind() string
	// Load installs module name from code, replacing any module of that name: the old
	// version takes no new calls, its calls in flight finish, then it is released. Bytes
	// the runtime refuses give an *InvalidModuleError.
	Load(ctx context.Context, name string, code []byte) (ModuleInfo, error)
	// Remove uninstalls module name the same way; calls made after it fail with an
	// error wrapping ErrNoModule.
	Remove(ctx context.Context, name string) error
}
