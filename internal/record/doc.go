// Package record holds what a run did, as the engine, verdict, report and merge
// share it: the run's record (Meta, written as queue/run.json), its queue and
// census rows, and one row per finished attempt (Attempt). How these are laid out
// in a log dir's files, and read back, is package logdir's (docs/files.md).
package record
