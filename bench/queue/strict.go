package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rocm/sgpu-queue/internal/schedule"
	"github.com/rocm/sgpu-queue/internal/simulate"
)

// compareTE runs the sleeping items under TE's rule and the default policy through
// the same driver, so that only the rule differs, then the binary itself.
func compareTE(bin, dir, conf, warm string, in *simulate.Input, o options) error {
	scale, gpus, runs := o.scale, o.gpus, o.runs
	items, err := in.ItemsOn(gpus)
	if err != nil {
		return err
	}
	items = scaled(items, scale)
	if o.prior != "" {
		return errors.New("-te with -prior: the driver's rules order by the weights; run -prior without -te")
	}
	setup, err := schedule.NewSetup(schedule.DefaultPolicy, items, gpus)
	if err != nil {
		return err
	}
	def := setup.Scheduler
	strict := schedule.StrictOrder(items)
	rules := []struct {
		name  string
		fresh func() (schedule.Scheduler, error)
	}{
		{"TE's rule (widest first, strict order)", func() (schedule.Scheduler, error) { return schedule.NewStrict(items, strict, gpus) }},
		{"sgpu-queue's default order, same driver", func() (schedule.Scheduler, error) { return def(), nil }},
	}
	if o.bias.Set() {
		rules = append(rules, struct {
			name  string
			fresh func() (schedule.Scheduler, error)
		}{"the default order, not calibrated", func() (schedule.Scheduler, error) { return setup.Uncalibrated(), nil }})
	}
	dur := make([]float64, len(items))
	for i, it := range items {
		dur[i] = it.Weight * o.bias.Of(it.Label)
	}
	bound := schedule.BoundOfWidths(dur, schedule.Widths(items), gpus)
	fmt.Printf("bound of the items' sleeps: %.3f s\n", bound)
	walls := make([][]float64, len(rules)+1)
	for r := 1; r <= runs; r++ {
		for k, rule := range rules {
			s, err := rule.fresh()
			if err != nil {
				return err
			}
			wall, err := drive(s, dir, items, gpus)
			if err != nil {
				return fmt.Errorf("%s: %w", rule.name, err)
			}
			walls[k] = append(walls[k], wall)
			fmt.Printf("run %d %-42s wall %.3f s (%.4f × bound)\n", r, rule.name, wall, wall/bound)
		}
		f, err := runOnce(bin, dir, conf, warm, filepath.Join(dir, fmt.Sprintf("te-logs%d", r)), in, scale, gpus)
		if err != nil {
			return fmt.Errorf("sgpu-queue run %d: %w", r, err)
		}
		walls[len(rules)] = append(walls[len(rules)], f.wall)
		fmt.Printf("run %d %-42s wall %.3f s (%.4f × bound); calibrated %s\n", r, "sgpu-queue run (the binary)", f.wall, f.wall/bound,
			f.calibration)
	}
	fmt.Printf("over %d runs (mean wall, × bound of the sleeps):\n", runs)
	for k, w := range walls {
		name := "sgpu-queue run (the binary)"
		if k < len(rules) {
			name = rules[k].name
		}
		mean := 0.0
		for _, x := range w {
			mean += x / float64(len(w))
		}
		fmt.Printf("  %-42s %.3f s  %.4f\n", name, mean, mean/bound)
	}
	return nil
}

// scaled is items with every weight divided by scale: the sleeping items' durations.
func scaled(items []schedule.Item, scale float64) []schedule.Item {
	out := slices.Clone(items)
	for i := range out {
		out[i].Weight /= scale
	}
	return out
}

// done is one finished item.
type done struct {
	item int
	err  error
}

// drive runs items on gpus fake GPUs as s hands them out, each its suite's script
// on a process of its own, and returns the wall clock from first start to last end.
func drive(s schedule.Scheduler, dir string, items []schedule.Item, gpus int) (float64, error) {
	free := make([]int, gpus)
	for g := range free {
		free[g] = g
	}
	var running []schedule.Running
	ends := make(chan done, len(items))
	start := time.Now()
	now := func() float64 { return time.Since(start).Seconds() }
	for {
		for {
			i, g, ok := s.Next(now(), free, running)
			if !ok {
				break
			}
			free = slices.DeleteFunc(free, func(x int) bool { return slices.Contains(g, x) })
			running = append(running, schedule.Running{Item: i, GPUs: g, Start: now()})
			go func() { ends <- done{item: i, err: item(dir, items[i], g).Run()} }()
		}
		if len(running) == 0 {
			if s.Len() > 0 {
				return 0, fmt.Errorf("%d items left that fit no GPU", s.Len())
			}
			return now(), nil
		}
		d := <-ends
		if d.err != nil {
			return 0, fmt.Errorf("item %s: %w", items[d.item].Key(), d.err)
		}
		k := slices.IndexFunc(running, func(r schedule.Running) bool { return r.Item == d.item })
		s.Calibration().Observe(d.item, now()-running[k].Start)
		free = append(free, running[k].GPUs...)
		running = slices.Delete(running, k, k+1)
	}
}

// item is the process that runs it on GPUs g: its suite's script, as run starts an
// item (TEST_FILTER, the GPU pin).
func item(dir string, it schedule.Item, g []int) *exec.Cmd {
	cmd := exec.Command(filepath.Join(dir, it.Label+".sh"))
	ids := make([]string, len(g))
	for k, x := range g {
		ids[k] = strconv.Itoa(x)
	}
	cmd.Env = append(os.Environ(), "TEST_LEVEL=3", "TEST_FILTER="+it.Tag, "HIP_VISIBLE_DEVICES="+strings.Join(ids, ","))
	return cmd
}
