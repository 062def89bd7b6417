package jsvm

import (
	"reflect"
	"sync/atomic"
	"unsafe"

	lib "modernc.org/libquickjs"
	"modernc.org/quickjs"
)

// The engine checks for an interrupt (Interrupt, or its eval timeout) only when its
// interrupt counter, which JavaScript function calls and loop iterations count down from
// 10000, reaches zero. A loop whose every iteration runs a long native operation (a
// join over a sparse array of a million elements takes 0.1 s) would thus run for
// minutes past its deadline. poke sets the counter of a VM's context to zero so that
// the engine checks at its next step. The context's address is a field the quickjs
// package does not export: contextOffset finds it by reflection, and when it cannot
// (another version of the package), poke does nothing and guard's abandonment is all
// that is left.

// contextOffset is the offset of the JSContext pointer in a quickjs.VM (ok false when
// the VM does not have it where expected).
var contextOffset, contextOK = func() (uintptr, bool) {
	t := reflect.TypeFor[quickjs.VM]()
	st, ok := t.FieldByName("state")
	if !ok || st.Type.Kind() != reflect.Struct || len(st.Index) != 1 {
		return 0, false
	}
	cc, ok := st.Type.FieldByName("cContext")
	if !ok || cc.Type.Kind() != reflect.Uintptr || len(cc.Index) != 1 {
		return 0, false
	}
	return st.Offset + cc.Offset, true
}()

// counterOffset is the offset of the interrupt counter in a JSContext.
var counterOffset = unsafe.Offsetof(lib.TJSContext{}.Finterrupt_counter)

// context returns the address of q's JSContext (C memory, never moved), or nil.
func jsContext(q *quickjs.VM) unsafe.Pointer {
	if !contextOK {
		return nil
	}
	return *(*unsafe.Pointer)(unsafe.Add(unsafe.Pointer(q), contextOffset))
}

// poke makes v's engine check for an interrupt at its next step. It must be called
// only while a call into v runs (or none does): never after v is closed.
func (v *vm) poke() {
	if v.ctx != nil {
		atomic.StoreInt32((*int32)(unsafe.Add(v.ctx, counterOffset)), 0)
	}
}
