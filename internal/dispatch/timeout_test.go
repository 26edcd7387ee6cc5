package dispatch

import (
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/record"
	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/weights"
)

func TestTimeoutFor(t *testing.T) {
	known := func(w float64) schedule.Item {
		return schedule.Item{ItemID: record.ItemID{Label: "s", Tag: "a"}, Weight: w, Known: true}
	}
	unknown := schedule.Item{ItemID: record.ItemID{Label: "s", Tag: "a"}, Weight: 999999}
	prior := schedule.Item{ItemID: record.ItemID{Label: "s", Tag: "a"}, Weight: 10, Prior: weights.Prior{Seconds: 10, Kind: weights.FromSibling}}
	std := Timeout{Factor: 3, Min: 5 * time.Minute, Max: time.Hour}
	tests := []struct {
		name   string
		t      Timeout
		it     schedule.Item
		want   time.Duration
		factor float64 // the calibration's (0: 1)
	}{
		{"off: zero factor", Timeout{Min: time.Minute, Max: time.Hour}, known(100), 0, 0},
		{"off: negative factor", Timeout{Factor: -1, Max: time.Hour}, unknown, 0, 0},
		{"factor × weight", std, known(200), 10 * time.Minute, 0},
		{"never below min", std, known(10), 5 * time.Minute, 0},
		{"never above max", std, known(3600), time.Hour, 0},
		{"no max: no cap", Timeout{Factor: 3, Min: time.Minute}, known(3600), 3 * time.Hour, 0},
		{"fractional factor", Timeout{Factor: 1.5}, known(2), 3 * time.Second, 0},
		{"zero weight takes min", std, known(0), 5 * time.Minute, 0},
		{"unknown item: max", std, unknown, time.Hour, 0},
		{"unknown item, no max: none", Timeout{Factor: 3, Min: time.Minute}, unknown, 0, 0},
		{"a prior is no weight: max", std, prior, time.Hour, 0},
		{"a suite running slower than its weights: its factor too", std, known(200), 25 * time.Minute, 2.5},
		{"a suite running faster: never shorter", std, known(200), 10 * time.Minute, 0.1},
		{"calibrated, still capped", std, known(1000), time.Hour, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.factor
			if f == 0 {
				f = 1
			}
			if got := tt.t.For(tt.it, f); got != tt.want {
				t.Errorf("For = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTimeoutExplain(t *testing.T) {
	std := Timeout{Factor: 3, Min: 5 * time.Minute, Max: time.Hour}
	tests := []struct {
		name   string
		t      Timeout
		it     schedule.Item
		want   string
		factor float64
	}{
		{"known", std, schedule.Item{Weight: 200, Known: true}, "3 × its learned weight 200.0s, within [5m0s, 1h0m0s]", 1},
		{"calibrated", std, schedule.Item{Weight: 200, Known: true},
			"3 × its learned weight 200.0s × 2.50 (its suite runs 2.50 × its weights this run), within [5m0s, 1h0m0s]", 2.5},
		{"faster: as learned", std, schedule.Item{Weight: 200, Known: true}, "3 × its learned weight 200.0s, within [5m0s, 1h0m0s]", 0.5},
		{"no maximum", Timeout{Factor: 3, Min: 2 * time.Second}, schedule.Item{Weight: 0.2, Known: true}, "3 × its learned weight 0.2s, at least 2s, no maximum", 1},
		{"unknown", std, schedule.Item{Weight: 999999}, "no learned weight: the item-timeout-max", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.t.Explain(tt.it, tt.factor)
			if got != tt.want {
				t.Errorf("Explain = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "\n") {
				t.Errorf("Explain spans lines: %q", got)
			}
		})
	}
}
