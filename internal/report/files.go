package report

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/rocm/sgpu-queue/internal/logdir"
	"github.com/rocm/sgpu-queue/internal/verdict"
)

// Files is what WriteFiles wrote.
type Files struct {
	Markdown string // the report itself, for the job summary
	MDPath   string // report/schedule.md
	SVGPath  string // report/timeline.svg
}

// SVGName is the timeline picture's file name, beside schedule.md.
const SVGName = "timeline.svg"

// WriteFiles writes report/schedule.md and report/timeline.svg of a run, each
// atomically (a reader never sees half a report), and returns the Markdown. On an
// error the Markdown is still returned when it was built.
func WriteFiles(r *logdir.Run, suites []verdict.Suite, s Stats) (Files, error) {
	f := Files{
		Markdown: render(r, suites, s, MaxBytes, Options{}),
		MDPath:   r.Layout.Report(),
		SVGPath:  filepath.Join(r.Layout.ReportDir(), SVGName),
	}
	if err := os.MkdirAll(r.Layout.ReportDir(), 0o755); err != nil {
		return f, fmt.Errorf("report: %v", err)
	}
	var svgBuf bytes.Buffer
	if err := SVG(&svgBuf, r, suites, s); err != nil {
		return f, fmt.Errorf("%s: %v", f.SVGPath, err)
	}
	if err := writeAtomic(f.SVGPath, svgBuf.Bytes()); err != nil {
		return f, err
	}
	if err := writeAtomic(f.MDPath, []byte(f.Markdown)); err != nil {
		return f, err
	}
	return f, nil
}

func writeAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}
