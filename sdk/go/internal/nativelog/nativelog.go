// Package nativelog carries the log lines of hooks run natively (outside WebAssembly)
// to whoever runs them: the cairntest host while it runs a call, standard error
// otherwise.
package nativelog

import (
	"fmt"
	"os"
	"sync"
)

var (
	mu   sync.Mutex // guards sink
	sink func(level int32, msg string)
)

// SetSink makes f receive every line until the returned function restores the previous
// sink.
func SetSink(f func(level int32, msg string)) (restore func()) {
	mu.Lock()
	prev := sink
	sink = f
	mu.Unlock()
	return func() {
		mu.Lock()
		sink = prev
		mu.Unlock()
	}
}

// Emit delivers one line.
func Emit(level int32, msg string) {
	mu.Lock()
	f := sink
	mu.Unlock()
	if f != nil {
		f(level, msg)
		return
	}
	fmt.Fprintf(os.Stderr, "cairn log %d: %s\n", level, msg)
}
