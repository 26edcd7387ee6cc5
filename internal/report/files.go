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
	NotWritten []*atomicfile.Error // those of the two that could not be written (a full disk, a link), and why
}

// SVGName is the timeline picture's file name, beside schedule.md.
const SVGName = "timeline.svg"

// WriteFiles writes report/schedule.md and report/timeline.svg into l, each atomically and never through a link,
// and returns the Markdown; NotWritten lists the files that failed.
func WriteFiles(l logdir.Layout, r *record.Run, suites []verdict.Suite, s Stats) (Files, error) {
	f := Files{
		Markdown: Render(r, suites, s, Options{}),
		MDPath:   l.Report(),
		SVGPath:  filepath.Join(l.ReportDir(), SVGName),
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
		if err := l.WriteFile(w.path, w.data); err != nil {
			var ae *atomicfile.Error
			if !errors.As(err, &ae) {
				ae = &atomicfile.Error{Path: w.path, Err: err} // a link refused
			}
			errs = append(errs, ae)
			f.NotWritten = append(f.NotWritten, ae)
		}
	}
	return f, errors.Join(errs...)
}
