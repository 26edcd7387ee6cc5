package report

import (
	"strings"
	"testing"

	"github.com/rocm/sgpu-queue/internal/record"
)

// The report says each suite's calibration factor, and how many items a prior
// estimated; nothing when neither happened.
func TestCalibrationNote(t *testing.T) {
	tests := []struct {
		name string
		meta record.Meta
		want []string // nil: no note
	}{
		{"neither", record.Meta{}, nil},
		{"calibrated", record.Meta{Calibration: []record.Factor{
			{Label: "torch", Factor: 0.5, Items: 12, Own: true, Run: 20},
			{Label: "core|x", Factor: 0.48, Items: 0, Run: 20},
		}}, []string{"**Estimates during the run.** Each estimate was its weight × its suite's factor",
			"torch ×0.50 (12 items), core\\|x ×0.48 (the run's, 20 items). "}},
		{"priors only", record.Meta{Priors: []record.Prior{{Key: "a/b", Seconds: 3, From: "x"}}},
			[]string{"1 item(s) the table lacked were ordered by a prior estimate"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := calibrationNote(&record.Run{Meta: tt.meta})
			if tt.want == nil {
				if b != nil {
					t.Errorf("a note where none was due")
				}
				return
			}
			var sb strings.Builder
			b.write(&sb)
			for _, w := range tt.want {
				if !strings.Contains(sb.String(), w) {
					t.Errorf("note %q lacks %q", sb.String(), w)
				}
			}
		})
	}
}
