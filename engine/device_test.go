package engine

import (
	"strings"
	"testing"
)

func TestParseDevice(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // "" for an error
		err  string // part of the error
	}{
		{"cpu", "cpu", ""},
		{"", "cpu", ""},
		{"cuda", "cuda:0", "built without CUDA"},
		{"cuda:1", "cuda:1", "built without CUDA"},
		{"cuda:x", "", "cuda:N"},
		{"cuda:-1", "", "cuda:N"},
		{"gpu", "", "want cpu, cuda or cuda:N"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			d, err := ParseDevice(tc.in)
			wantErr := tc.want == "" || (!CUDABuilt && strings.HasPrefix(tc.in, "cuda"))
			if wantErr {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseDevice(%q) = %v, %v; want an error containing %q", tc.in, d, err, tc.err)
				}
				if strings.Contains(tc.err, "CUDA") && !strings.Contains(err.Error(), "-tags "+BuildTag) {
					t.Errorf("error %q does not say how to rebuild", err)
				}
				return
			}
			if err != nil || d.String() != tc.want {
				t.Fatalf("ParseDevice(%q) = %v, %v; want %s", tc.in, d, err, tc.want)
			}
		})
	}
}

// FuzzParseDevice: any flag value parses or errors without panicking, and
// an accepted one prints back to a value that parses to the same device.
func FuzzParseDevice(f *testing.F) {
	for _, s := range []string{"cpu", "cuda", "cuda:0", "cuda:12", "cuda:", "cuda:+1", "cuda:08", "CPU", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDevice(s)
		if err != nil {
			return
		}
		d2, err := ParseDevice(d.String())
		if err != nil || d2 != d {
			t.Fatalf("%q -> %v -> %v, %v", s, d, d2, err)
		}
	})
}
