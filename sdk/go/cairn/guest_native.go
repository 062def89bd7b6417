//go:build !wasip1

package cairn

import "github.com/cairnkv/cairn/sdk/go/internal/nativelog"

func emitLog(level Level, msg string) { nativelog.Emit(int32(level), msg) }
