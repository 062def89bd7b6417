//go:build linux

package gopluginhost

import (
	"runtime"
	"syscall"
)

// lockLaunchThread locks the calling goroutine (a supervisor) to its OS thread for as
// long as it runs, so that the parent death signal of the plugins it starts fires
// when the server dies and not when the Go runtime retires a thread: Linux sends
// PR_SET_PDEATHSIG when the thread that forked the child exits. The returned function
// unlocks it; the supervisor calls it after its plugin is dead.
func lockLaunchThread() (unlock func()) {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

// sysProcAttr returns the process attributes of a plugin: SIGKILL when the thread
// that started it (the supervisor's, see lockLaunchThread) dies, which happens when
// the server dies, however it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
