package textfmt

import (
	"math"
	"strconv"
)

// Secs prints seconds plainly ("6935 s", "2624.25 s"); "–" for NaN.
func Secs(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + " s"
}
