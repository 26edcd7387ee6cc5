// Package record holds what a run did as the engine, verdict, report and merge share it; package logdir lays it
// out in files (docs/files.md).
package record
