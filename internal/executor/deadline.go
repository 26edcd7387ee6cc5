package executor

import (
	"context"
	"errors"
	"time"
)

// Deadline bounds ctx by d (none when d ≤ 0) with cause, so a command past its own deadline is told from a cancel.
func Deadline(ctx context.Context, d time.Duration, cause error) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeoutCause(ctx, d, cause)
}

// PastDeadline reports whether sub ended at its own deadline, not because ctx was cancelled.
func PastDeadline(ctx, sub context.Context, cause error) bool {
	return ctx.Err() == nil && errors.Is(context.Cause(sub), cause)
}
