package cairn

import (
	"fmt"

	"github.com/cairnkv/cairn/sdk/abi"
)

// Level is the level of a log line (slog's levels divided by four).
type Level int32

// The log levels of ABI v1.
const (
	LevelDebug Level = abi.LogDebug
	LevelInfo  Level = abi.LogInfo
	LevelWarn  Level = abi.LogWarn
	LevelError Level = abi.LogError
)

var levelNames = map[Level]string{LevelDebug: "debug", LevelInfo: "info", LevelWarn: "warn", LevelError: "error"}

// String returns "debug", "info", "warn" or "error".
func (l Level) String() string {
	if s, ok := levelNames[l]; ok {
		return s
	}
	return fmt.Sprintf("level(%d)", int32(l))
}

// Log writes one line to the server log, tagged with the module and function. The host
// caps what one call may log (abi.MaxLogBytesPerCall) and drops the rest. Natively (in
// tests) the line goes to the cairntest host, or to standard error.
func Log(level Level, msg string) { emitLog(level, msg) }

// Logf writes one formatted line to the server log.
func Logf(level Level, format string, args ...any) { emitLog(level, fmt.Sprintf(format, args...)) }
