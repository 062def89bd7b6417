package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// subcommand is what a `cairn NAME SUB [args] [flags]` command parsed.
type subcommand struct {
	name   string // e.g. "cairn module"
	usage  string
	stderr io.Writer
}

// fail prints a usage error and the usage, and returns exit code 2.
func (c subcommand) fail(format string, a ...any) int {
	fmt.Fprintf(c.stderr, c.name+": "+format+"\n", a...)
	fmt.Fprint(c.stderr, c.usage)
	return 2
}

// parse parses args with fs (flags may come anywhere), then takes the subcommand and
// checks its number of arguments against arity (a negative arity: any number, which the
// command checks itself). It returns the subcommand and its
// arguments; when ok is false the command is over, with exit code code (0 after -h,
// which printed the usage to stdout; 2 after a usage error, printed to stderr).
func (c subcommand) parse(fs *flag.FlagSet, args []string, arity map[string]int, stdout io.Writer) (sub string, pos []string, code int, ok bool) {
	pos, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(stdout, c.usage)
		return "", nil, 0, false
	}
	if err != nil {
		return "", nil, c.fail("%v", err), false
	}
	if len(pos) == 0 {
		return "", nil, c.fail("missing command"), false
	}
	sub, pos = pos[0], pos[1:]
	n, known := arity[sub]
	if !known {
		return "", nil, c.fail("unknown command %q", sub), false
	}
	if n >= 0 && len(pos) != n {
		return "", nil, c.fail("%s takes %d argument(s), got %d", sub, n, len(pos)), false
	}
	return sub, pos, 0, true
}
