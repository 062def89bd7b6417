package hooks

// MaxModuleNameLen is the longest name of an extension module: a registered
// WebAssembly module or a process plugin.
const MaxModuleNameLen = 64

// ValidModuleName reports whether name may name an extension module: 1 to
// MaxModuleNameLen characters from [A-Za-z0-9_.-], not starting with a dot or a dash.
// Registered WebAssembly modules (core/modules) and process plugins follow this one
// rule, so the two kinds share one namespace, and a name is safe as a file name and
// in a URL path segment.
func ValidModuleName(name string) bool {
	if name == "" || len(name) > MaxModuleNameLen || name[0] == '.' || name[0] == '-' {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !moduleNameByte(name[i]) {
			return false
		}
	}
	return true
}

// moduleNameByte reports whether c may appear in a module name.
func moduleNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
}
