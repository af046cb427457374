package main

import (
	"bytes"
	"context"
	"errors"
	"testing"
)

func TestMasksCommand(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"sep-to-last", []string{"masks", "--mask", "sep-to-last", "--target", "WALK SEP JUMP JUMP SEP"},
			"1 0 0 0 0 0\n1 1 0 0 0 0\n0 1 1 0 0 0\n0 0 1 1 0 0\n0 0 1 1 1 0\n0 1 0 0 1 1\n"},
		{"causal", []string{"masks", "--mask", "causal", "--target", "A B"},
			"1 0 0\n1 1 0\n1 1 1\n"},
		{"custom separator", []string{"masks", "--mask", "sep-full", "--sep", "|", "--target", "A | B"},
			"1 0 0 0\n1 1 0 0\n1 1 1 0\n0 0 1 1\n"},
		{"empty target", []string{"masks", "--mask", "sep-to-last"}, "1\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if err := run(context.Background(), c.args, &out, &errb); err != nil {
				t.Fatalf("error %v (stderr %s)", err, errb.String())
			}
			if out.String() != c.want {
				t.Errorf("got\n%s\nwant\n%s", out.String(), c.want)
			}
		})
	}
}

func TestMasksCommandErrors(t *testing.T) {
	for _, args := range [][]string{
		{"masks", "--mask", "sep-sideways"},
		{"masks", "stray"},
		{"masks", "--sep", " "},
	} {
		var out, errb bytes.Buffer
		err := run(context.Background(), args, &out, &errb)
		var ue *usageError
		if !errors.As(err, &ue) {
			t.Errorf("%v: want a usage error, got %v", args, err)
		}
		if out.Len() != 0 {
			t.Errorf("%v: wrote output %q", args, out.String())
		}
	}
}
