package dispatch

import (
	"strings"
	"testing"
	"time"

	"github.com/rocm/sgpu-queue/internal/schedule"
)

func TestTimeoutFor(t *testing.T) {
	known := func(w float64) schedule.Item { return schedule.Item{Label: "s", Tag: "a", Weight: w, Known: true} }
	unknown := schedule.Item{Label: "s", Tag: "a", Weight: 999999}
	std := Timeout{Factor: 3, Min: 5 * time.Minute, Max: time.Hour}
	tests := []struct {
		name string
		t    Timeout
		it   schedule.Item
		want time.Duration
	}{
		{"off: zero factor", Timeout{Min: time.Minute, Max: time.Hour}, known(100), 0},
		{"off: negative factor", Timeout{Factor: -1, Max: time.Hour}, unknown, 0},
		{"factor × weight", std, known(200), 10 * time.Minute},
		{"never below min", std, known(10), 5 * time.Minute},
		{"never above max", std, known(3600), time.Hour},
		{"no max: no cap", Timeout{Factor: 3, Min: time.Minute}, known(3600), 3 * time.Hour},
		{"fractional factor", Timeout{Factor: 1.5}, known(2), 3 * time.Second},
		{"zero weight takes min", std, known(0), 5 * time.Minute},
		{"unknown item: max", std, unknown, time.Hour},
		{"unknown item, no max: none", Timeout{Factor: 3, Min: time.Minute}, unknown, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.t.For(tt.it); got != tt.want {
				t.Errorf("For = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTimeoutExplain(t *testing.T) {
	std := Timeout{Factor: 3, Min: 5 * time.Minute, Max: time.Hour}
	tests := []struct {
		name string
		t    Timeout
		it   schedule.Item
		want string
	}{
		{"known", std, schedule.Item{Weight: 200, Known: true}, "3 × its learned weight 200.0s, within [5m0s, 1h0m0s]"},
		{"no maximum", Timeout{Factor: 3, Min: 2 * time.Second}, schedule.Item{Weight: 0.2, Known: true}, "3 × its learned weight 0.2s, at least 2s, no maximum"},
		{"unknown", std, schedule.Item{Weight: 999999}, "no learned weight: the item-timeout-max"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.t.Explain(tt.it)
			if got != tt.want {
				t.Errorf("Explain = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, "\n") {
				t.Errorf("Explain spans lines: %q", got)
			}
		})
	}
}
