package cli

import (
	"testing"
)

// The help of verify is pinned: it is what a user adopting the queue reads first.
func TestVerifyHelp(t *testing.T) {
	checkHelp(t, "verify")
}
