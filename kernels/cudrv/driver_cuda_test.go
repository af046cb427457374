//go:build gpu

package cudrv

import (
	"errors"
	"strings"
	"testing"
)

// TestInit: Init never ends the process. Without a driver or GPU it
// returns an error naming the library or cuInit's result, the same one
// every time; with a GPU it succeeds and the driver counts one or more.
func TestInit(t *testing.T) {
	err := Init()
	if err != nil {
		t.Logf("no usable GPU here: %v", err)
		if !strings.Contains(err.Error(), lib) {
			t.Errorf("Init's error does not name %s: %v", lib, err)
		}
		if again := Init(); again != err {
			t.Errorf("second Init: %v, want the first's %v", again, err)
		}
		if _, nerr := NumDevices(); !errors.Is(nerr, err) {
			t.Errorf("NumDevices without a driver: %v, want Init's error", nerr)
		}
		return
	}
	n, err := NumDevices()
	if err != nil || n < 1 {
		t.Fatalf("NumDevices: %d, %v", n, err)
	}
	d, err := GetDevice(0)
	if err != nil {
		t.Fatal(err)
	}
	name, err := d.Name()
	if err != nil || name == "" {
		t.Errorf("Name: %q, %v", name, err)
	}
	if mj, _, err := d.ComputeCapability(); err != nil || mj < 1 {
		t.Errorf("ComputeCapability: major %d, %v", mj, err)
	}
}

// TestErrorText names a result by its code when the driver has no name.
func TestErrorText(t *testing.T) {
	cases := []struct {
		name string
		err  *Error
		want string
	}{
		{"named", &Error{Code: 100, Name: "CUDA_ERROR_NO_DEVICE"}, "CUDA_ERROR_NO_DEVICE (100)"},
		{"unnamed", &Error{Code: 999}, "CUresult 999"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.err.Error(); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
