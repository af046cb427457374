//go:build gpuemu && !gpu

package kernels

import (
	"io/fs"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The emulator runs correct kernels and reports the misuse a GPU would
// punish with wrong results.
func TestEmulatorChecks(t *testing.T) {
	for _, c := range []struct {
		name        string
		kernel      string
		grid, block dim3
		args        []any
		wantErr     string
		wantOut     []float32
	}{
		{name: "block sum 256", kernel: "emu_test_block_sum", grid: dim3{2, 1, 1}, block: dim3{256, 1, 1},
			wantOut: []float32{256 * 257 / 2, 256 * 257 / 2}},
		{name: "block sum 64", kernel: "emu_test_block_sum", grid: dim3{1, 1, 1}, block: dim3{64, 1, 1},
			wantOut: []float32{64 * 65 / 2}},
		{name: "partial warp", kernel: "emu_test_block_sum", grid: dim3{1, 1, 1}, block: dim3{48, 1, 1},
			wantErr: "partial warp"},
		{name: "exited lanes", kernel: "emu_test_early_exit", grid: dim3{1, 1, 1}, block: dim3{64, 1, 1},
			wantErr: "lanes of the warp exited"},
		{name: "divergent barrier", kernel: "emu_test_divergent", grid: dim3{1, 1, 1}, block: dim3{128, 1, 1},
			wantErr: "different __syncthreads"},
		{name: "barrier in a plain kernel", kernel: "emu_test_plain_barrier", grid: dim3{1, 1, 1}, block: dim3{32, 1, 1},
			wantErr: "listed as plain"},
		{name: "wrong argument type", kernel: "emu_test_block_sum", grid: dim3{1, 1, 1}, block: dim3{32, 1, 1},
			args: []any{1}, wantErr: "takes (p), launched with (i)"},
		{name: "too many threads", kernel: "emu_test_block_sum", grid: dim3{1, 1, 1}, block: dim3{64, 32, 1},
			wantErr: "2048 threads"},
		{name: "unknown kernel", kernel: "no_such_kernel", grid: dim3{1, 1, 1}, block: dim3{32, 1, 1},
			wantErr: "not in the emulator's table"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := up(t, make([]float32, 4))
			args := c.args
			if args == nil {
				args = []any{out}
			}
			err := dev.launch(c.kernel, c.grid, c.block, 0, args...)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			ok(t, err)
			same(t, "out", down(t, out, len(c.wantOut)), c.wantOut)
		})
	}
}

// The hostile schedule changes the result of kernels that depend on the
// default order; the default order hides each of these bugs.
func TestEmulatorHostileSchedule(t *testing.T) {
	for _, c := range []struct {
		name        string
		kernel      string
		grid, block dim3
		want        []float32 // the default schedule's (accidentally right) output
	}{
		{"missing barrier", "emu_test_missing_barrier", dim3{1, 1, 1}, dim3{64, 1, 1}, []float32{1, 1, 2, 3}},
		{"warps out of step", "emu_test_cross_warp", dim3{1, 1, 1}, dim3{64, 1, 1}, []float32{32, 32, 32, 32}},
		{"block order", "emu_test_block_chain", dim3{4, 1, 1}, dim3{32, 1, 1}, []float32{1, 2, 3, 4}},
		{"unwritten shared memory", "emu_test_unwritten_shared", dim3{1, 1, 1}, dim3{32, 1, 1}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			run := func(hostile bool) []float32 {
				defer setHostile(setHostile(hostile))
				out := up(t, make([]float32, 64)) // a slot per thread
				ok(t, dev.launch(c.kernel, c.grid, c.block, 0, out))
				return down(t, out, 64)
			}
			def, got := run(false), run(true)
			if c.want == nil {
				for i, v := range got[:c.block[0]] {
					if !math.IsNaN(float64(v)) {
						t.Fatalf("hostile schedule: out[%d] = %v, want NaN (unwritten shared memory)", i, v)
					}
				}
				return
			}
			same(t, "default schedule", def[:len(c.want)], c.want)
			if slices.Equal(got, def) {
				t.Fatalf("hostile schedule gave %v, the same as the default order", got)
			}
		})
	}
	t.Run("bad setting", func(t *testing.T) {
		t.Setenv(HostileEnv, "yes")
		if _, err := Open(0); err == nil || !strings.Contains(err.Error(), HostileEnv) {
			t.Fatalf("error %v, want one naming %s", err, HostileEnv)
		}
	})
}

// Every kernel in the sources is in the emulator's table, so a new kernel
// cannot go untested there.
func TestEmulatorTableComplete(t *testing.T) {
	re := regexp.MustCompile(`extern "C" __global__ void (?:__launch_bounds__\([0-9, ]+\) )?([a-z_0-9]+)\(`)
	names, err := fs.Glob(emuSources, "*.cu")
	ok(t, err)
	var found []string
	for _, n := range names {
		src, err := emuSources.ReadFile(n)
		ok(t, err)
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			found = append(found, m[1])
			if _, err := dev.fn(m[1]); err != nil {
				t.Errorf("%s: %v", n, err)
			}
		}
	}
	slices.Sort(found)
	if !slices.Equal(found, Kernels()) {
		t.Errorf("kernels in the sources %v, launchers use %v", found, Kernels())
	}
}
