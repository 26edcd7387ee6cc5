package adapter

import (
	"fmt"
	"slices"
	"strings"
)

// pytest's options that take the next argument as their value (core and common plugins); one missing here is
// caught against pytest's own operands (reconcileOperands).
const pytestValueShort = "kmcpWorn"

var pytestValueLong = setOf(
	// core
	"--config-file", "--pythonwarnings", "--override-ini", "--rootdir", "--basetemp",
	"--confcutdir", "--ignore", "--ignore-glob", "--deselect", "--junitxml", "--junit-xml",
	"--junitprefix", "--junit-prefix", "--durations", "--durations-min", "--maxfail", "--tb",
	"--show-capture", "--capture", "--import-mode", "--log-level", "--log-format",
	"--log-date-format", "--log-cli-level", "--log-cli-format", "--log-cli-date-format",
	"--log-file", "--log-file-mode", "--log-file-level", "--log-file-format",
	"--log-file-date-format", "--log-auto-indent", "--log-disable", "--color",
	"--code-highlight", "--pastebin", "--doctest-glob", "--doctest-report", "--assert",
	"--verbosity", "--last-failed-no-failures", "--lfnf", "--pdbcls", "--rsyncdir",
	"--rsyncignore", "--keep-duplicates-of", "--deselect-file", "--max-warnings",
	// xdist
	"--numprocesses", "--maxprocesses", "--dist", "--tx", "--max-worker-restart",
	"--maxschedchunk",
	// timeout, rerunfailures, cov, html, randomly/random-order, repeat
	"--timeout", "--timeout-method", "--timeout_method", "--reruns", "--reruns-delay",
	"--only-rerun", "--rerun-except", "--cov-report", "--cov-config", "--cov-fail-under",
	"--cov-context", "--html", "--css", "--randomly-seed", "--random-order-bucket",
	"--random-order-seed", "--count", "--repeat-scope",
)

func setOf(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, v := range s {
		m[v] = true
	}
	return m
}

// staticOperands returns the indices of the path operands as the option table reads them, and everything from "--".
func staticOperands(args []string) []int {
	var ops []int
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			for j := i; j < len(args); j++ {
				ops = append(ops, j)
			}
			return ops
		case strings.HasPrefix(a, "--"):
			if !strings.Contains(a, "=") && pytestValueLong[a] {
				i++ // its value
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// Short flags cluster (-vx); a value option takes the rest of the word or, at the end, the next argument.
			for j := 1; j < len(a); j++ {
				if strings.IndexByte(pytestValueShort, a[j]) >= 0 {
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
		default:
			ops = append(ops, i)
		}
	}
	return ops
}

// reconcileOperands checks the table's reading against the operands pytest took and returns the indices to drop;
// where they differ and it is ambiguous, the user is asked to write the value with '='.
func reconcileOperands(args []string, static []int, pytestSays []string) ([]int, error) {
	var staticWords []string
	end := len(args) // index of a "--", whose operands follow it
	for _, i := range static {
		if args[i] == "--" {
			end = i
			continue
		}
		staticWords = append(staticWords, args[i])
	}
	if slices.Equal(staticWords, pytestSays) {
		return static, nil
	}
	want := map[string]int{}
	for _, w := range pytestSays {
		want[w]++
	}
	var ops []int
	for w, n := range want {
		var at []int
		for i, a := range args {
			if a == w && (i > end || !strings.HasPrefix(a, "-")) {
				at = append(at, i)
			}
		}
		if len(at) != n {
			return nil, fmt.Errorf("cannot tell which of the arguments %q pytest takes as the path %q (pytest reads the operands %q): write "+
				"option values with '=' (--timeout=300, -k=expr) so that none looks like a path", args, w, pytestSays)
		}
		ops = append(ops, at...)
	}
	if end < len(args) {
		ops = append(ops, end)
	}
	return ops, nil
}

// withoutIndices is args less the given indices, in order.
func withoutIndices(args []string, drop []int) []string {
	gone := map[int]bool{}
	for _, i := range drop {
		gone[i] = true
	}
	out := make([]string, 0, len(args))
	for i, a := range args {
		if !gone[i] {
			out = append(out, a)
		}
	}
	return out
}
