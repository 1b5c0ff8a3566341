package cli

import "strconv"

// JSONRequested reports whether args (the command line after the program
// name) ask for JSON with -j or --json, wherever they stand. It is decided
// before flags are parsed so that a parse error met before the flag, or a
// command that emulates a tool's usage output, still answers in JSON.
// Arguments after "--" are operands, not flags.
func JSONRequested(args []string) bool {
	want := false
	for _, a := range args {
		switch {
		case a == "--":
			return want
		case a == "-j" || a == "--json":
			want = true
		case len(a) > len("--json=") && a[:len("--json=")] == "--json=":
			if v, err := strconv.ParseBool(a[len("--json="):]); err == nil {
				want = v
			}
		}
	}
	return want
}
