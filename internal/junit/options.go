package junit

// Options are a run's JUnit settings (docs/files.md), one group of the run's
// options.
type Options struct {
	// Dir receives one merged JUnit file per suite, <Dir>/<label>.xml, when the
	// environment sets a JUnit prefix; "" = <repo root>/test-results/junit.
	Dir string
	// InLogDir: when the environment sets no JUnit prefix, the setups and items get
	// <log dir>/junit/<label>/ (logdir.Layout.JUnitDir), so that every run has the
	// evidence a no-run is judged from (the CLI; the action sets its own).
	InLogDir bool
	// Optional are the weight keys (path.Match patterns) of items whose re-entry
	// writes no JUnit file: judged by their exit code alone, never no-run.
	Optional []string
}
