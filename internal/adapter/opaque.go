package adapter

import (
	"context"

	"github.com/rocm/sgpu-queue/internal/config"
	"github.com/rocm/sgpu-queue/internal/executor"
)

// opaqueSuite is `<label> <logfile> opaque <script> [args…]`: the whole script is one item. Its census is its bare
// label, so keys left from a list suite are pruned.
type opaqueSuite struct {
	s config.Suite
}

// List runs nothing: the suite is one untagged item.
func (opaqueSuite) List(context.Context, executor.Executor, Listing) (*Listed, error) {
	return &Listed{Items: []Item{{}}}, nil
}

// Command runs the script whole, on a re-run too: it has no tests to narrow to.
func (o opaqueSuite) Command(it Item, run Run) executor.Command {
	run.Narrowed = false
	return hookCommand(o.s, "", true, run)
}
