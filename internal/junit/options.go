package junit

// Options are a run's JUnit settings (docs/files.md).
type Options struct {
	// Dir receives one merged file per suite when a JUnit prefix is set; "" = <repo root>/test-results/junit.
	Dir string
	// InLogDir: without a JUnit prefix, items write under <log dir>/junit/<label>/, so no-run can still be judged.
	InLogDir bool
	// Optional are the weight keys (path.Match) of items that write no JUnit: judged by exit code, never no-run.
	Optional []string
}
