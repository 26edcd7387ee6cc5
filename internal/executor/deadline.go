package executor

import (
	"context"
	"errors"
	"time"
)

// Deadline bounds ctx by d (none when d ≤ 0), with cause as the reason: a listing,
// setup or once-per-run command stopped at its own deadline is told apart from one
// whose run was cancelled (PastDeadline).
func Deadline(ctx context.Context, d time.Duration, cause error) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, d, cause)
}

// PastDeadline reports whether sub (from Deadline) ended at its own deadline,
// cause, not because the run (ctx) was cancelled.
func PastDeadline(ctx, sub context.Context, cause error) bool {
	return ctx.Err() == nil && errors.Is(context.Cause(sub), cause)
}
