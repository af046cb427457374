package models_test

import (
	"strings"
	"testing"

	"compbench/models"
	"compbench/models/transformer"
)

// validate checks c as train.ValidateModel does for the Transformer
// family: the shared fields, then the family's.
func validate(c *models.Config) error {
	if err := c.Validate(); err != nil {
		return err
	}
	tc := transformer.ConfigOf(*c)
	return tc.Validate()
}

// TestUniversalConfig: --model universal gets Keysers et al.'s 6 steps
// unless the config says otherwise, other models reject ut_steps, and
// switching away from universal clears it.
func TestUniversalConfig(t *testing.T) {
	cases := []struct {
		name    string
		variant string
		edit    func(*models.Config)
		before  bool // edit before ApplyVariant instead of after
		steps   int
		wantErr string
	}{
		{"default steps", models.Universal, func(*models.Config) {}, false, models.DefaultUTSteps, ""},
		{"steps kept", models.Universal, func(c *models.Config) { c.UTSteps = 8 }, true, 8, ""},
		{"zero steps", models.Universal, func(c *models.Config) { c.UTSteps = -1 }, false, -1, "ut_steps -1 < 1"},
		{"not universal", "transformer", func(c *models.Config) { c.UTSteps = 4 }, false, 4, "applies to the universal model only"},
		{"double I/O", models.Universal, func(c *models.Config) { c.IOEncoder = models.IODouble }, false, models.DefaultUTSteps, "not available for the universal model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := models.DefaultConfig()
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
			err := validate(&c)
			if (err == nil) != (tc.wantErr == "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Validate: %v, want %q", err, tc.wantErr)
			}
		})
	}
	c := models.DefaultConfig()
	if err := c.ApplyVariant(models.Universal); err != nil {
		t.Fatal(err)
	}
	if err := c.ApplyVariant("relative"); err != nil {
		t.Fatal(err)
	}
	if err := validate(&c); c.UTSteps != 0 || err != nil {
		t.Errorf("universal then relative: ut_steps %d, Validate %v", c.UTSteps, err)
	}
}
