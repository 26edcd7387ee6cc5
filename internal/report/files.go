package report

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/rocm/sgpu-queue/internal/atomicfile"
	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/record"

	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Files is what WriteFiles wrote.
type Files struct {
	Markdown   string              // the report itself, for the job summary
	MDPath     string              // report/schedule.md
	SVGPath    string              // report/timeline.svg
	NotWritten []*atomicfile.Error // those of the two that could not be written (a full disk), and why
}

// SVGName is the timeline picture's file name, beside schedule.md.
const SVGName = "timeline.svg"

// WriteFiles writes report/schedule.md and report/timeline.svg of a run, each
// atomically (a reader never sees half a report, a failed write leaves no temporary
// file), and returns the Markdown. Each file is tried even when the other failed;
// NotWritten lists those that were not, and the error says why. The Markdown is
// returned whenever it was built.
func WriteFiles(r *record.Run, suites []verdict.Suite, s Stats) (Files, error) {
	f := Files{
		Markdown: Render(r, suites, s, Options{}),
		MDPath:   logdir.Layout{Root: r.Dir}.Report(),
		SVGPath:  filepath.Join(logdir.Layout{Root: r.Dir}.ReportDir(), SVGName),
	}
	var svgBuf bytes.Buffer
	if err := SVG(&svgBuf, r, suites, s); err != nil {
		return f, fmt.Errorf("%s: %w", f.SVGPath, err)
	}
	var errs []error
	for _, w := range []struct {
		path string
		data []byte
	}{{f.SVGPath, svgBuf.Bytes()}, {f.MDPath, []byte(f.Markdown)}} {
		if err := atomicfile.Write(w.path, w.data, 0o644); err != nil {
			errs = append(errs, err)
			var ae *atomicfile.Error
			if errors.As(err, &ae) {
				f.NotWritten = append(f.NotWritten, ae)
			}
		}
	}
	return f, errors.Join(errs...)
}
