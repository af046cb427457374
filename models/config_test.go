package models

import (
	"strings"
	"testing"
)

// TestUniversalConfig: --model universal gets Keysers et al.'s 6 steps
// unless the config says otherwise, other models reject ut_steps, and
// switching away from universal clears it.
func TestUniversalConfig(t *testing.T) {
	cases := []struct {
		name    string
		variant string
		edit    func(*Config)
		before  bool // edit before ApplyVariant instead of after
		steps   int
		wantErr string
	}{
		{"default steps", Universal, func(*Config) {}, false, DefaultUTSteps, ""},
		{"steps kept", Universal, func(c *Config) { c.UTSteps = 8 }, true, 8, ""},
		{"zero steps", Universal, func(c *Config) { c.UTSteps = -1 }, false, -1, "ut_steps -1 < 1"},
		{"not universal", "transformer", func(c *Config) { c.UTSteps = 4 }, false, 4, "applies to the universal model only"},
		{"double I/O", Universal, func(c *Config) { c.IOEncoder = IODouble }, false, DefaultUTSteps, "not available for the universal model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			if tc.before {
				tc.edit(&c)
			}
			if err := c.ApplyVariant(tc.variant); err != nil {
				t.Fatal(err)
			}
			if !tc.before {
				tc.edit(&c)
			}
			if c.UTSteps != tc.steps {
				t.Errorf("ut_steps %d, want %d", c.UTSteps, tc.steps)
			}
			err := c.Validate()
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Validate: %v, want %q", err, tc.wantErr)
			}
		})
	}
	c := DefaultConfig()
	if err := c.ApplyVariant(Universal); err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyVariant("relative"); err != nil {
		t.Fatal(err)
	}
	if c.UTSteps != 0 || c.Validate() != nil {
		t.Errorf("universal then relative: ut_steps %d, Validate %v", c.UTSteps, c.Validate())
	}
}
