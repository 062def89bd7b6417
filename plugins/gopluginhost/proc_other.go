//go:build !linux

package gopluginhost

import "syscall"

// lockLaunchThread does nothing: there is no parent death signal outside Linux.
func lockLaunchThread() (unlock func()) { return func() {} }

// sysProcAttr returns nil: outside Linux a plugin outlives a server that dies without
// calling Close.
func sysProcAttr() *syscall.SysProcAttr { return nil }
