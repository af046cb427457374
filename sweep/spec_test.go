package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeSpec(t *testing.T, dir, body string) string {
	t.Helper()
	p := filepath.Join(dir, "s.json")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSpecErrors: every bad sweep file is refused by Load, naming what is
// wrong, before anything runs.
func TestSpecErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "train.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := `"models":["transformer"],"seeds":[1],"tasks":["length"]`
	for _, c := range []struct{ name, body, want string }{
		{"unknown key", `{` + base + `,"modles":["x"]}`, `unknown field "modles"`},
		{"unknown config key", `{` + base + `,"config":{"stpes":3}}`, `unknown field "stpes"`},
		{"unknown model config key", `{` + base + `,"config":{"model":{"dimm":3}}}`, `unknown field "dimm"`},
		{"bad config value", `{` + base + `,"config":{"steps":0}}`, "train at least 1 step"},
		{"empty models", `{"models":[],"seeds":[1],"tasks":["length"]}`, "models: empty axis"},
		{"empty seeds", `{"models":["transformer"],"seeds":[],"tasks":["length"]}`, "seeds: empty axis"},
		{"no data", `{"models":["transformer"],"seeds":[1]}`, "tasks or a datasets axis"},
		{"unknown model", `{"models":["transformr"],"seeds":[1],"tasks":["length"]}`, "transformr"},
		{"unknown task", `{"models":["transformer"],"seeds":[1],"tasks":["lenght"]}`, "lenght"},
		{"empty vary axis", `{` + base + `,"vary":[{"key":"lr","values":[]}]}`, "vary: lr: empty axis"},
		{"unknown vary key", `{` + base + `,"vary":[{"key":"lrate","values":[1]}]}`, `unknown field "lrate"`},
		{"vary seed", `{` + base + `,"vary":[{"key":"seed","values":[1]}]}`, "seeds axis"},
		{"duplicate names", `{"models":["transformer"],"seeds":[1],"datasets":[{"name":"a b","train":"train.jsonl","test":"train.jsonl"},{"name":"a_b","train":"train.jsonl","test":"train.jsonl"}]}`, "two cells are named a_b.transformer.seed1"},
		{"missing file", `{"models":["transformer"],"seeds":[1],"datasets":[{"name":"a","train":"nope.jsonl","test":"train.jsonl"}]}`, "nope.jsonl does not exist"},
		{"unknown model key", `{"models":[{"variant":"transformer","confg":{}}],"seeds":[1],"tasks":["length"]}`, `unknown field "confg"`},
		{"bad model config", `{"models":[{"variant":"transformer","config":{"lr":-1}}],"seeds":[1],"tasks":["length"]}`, "lr -1 must be > 0"},
		{"glob without match", `{"models":["transformer"],"seeds":[1],"datasets":[{"glob":"nothing-*"}]}`, `glob "nothing-*" matches no folder`},
		{"glob with paths", `{"models":["transformer"],"seeds":[1],"datasets":[{"glob":"*","train":"train.jsonl"}]}`, "give only a glob"},
		{"trailing data", `{` + base + `} {}`, "data after the JSON object"},
		{"unknown preset", `{` + base + `,"preset":"gpu-huge"}`, `preset: unknown preset "gpu-huge" (known: cpu-small, paper)`},
		{"unknown model preset", `{"models":[{"variant":"transformer","preset":"cpu-smal"}],"seeds":[1],"tasks":["length"]}`, `models: transformer: preset: unknown preset "cpu-smal" (known: cpu-small, paper)`},
		{"preset on a pretrained model", `{"models":["t5"],"seeds":[1],"tasks":["length"],"preset":"cpu-small"}`, "models: t5: preset cpu-small sizes a model"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(writeSpec(t, dir, c.body))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Load: %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestCells: the cross product in its fixed order, stable names, and the
// vary values in each cell's --config file.
func TestCells(t *testing.T) {
	dir := t.TempDir()
	s, err := Load(writeSpec(t, dir, `{"models":["transformer",{"name":"lstm","variant":"lstm-copy","config":{"lr":0.003,"model":{"dropout":0.2}}}],"seeds":[1,2],"tasks":["length"],
		"config":{"steps":5,"model":{"dim":16}},"vary":[{"key":"model.layers","values":[1,2]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	cells := s.Cells()
	if len(cells) != 8 {
		t.Fatalf("%d cells, want 8", len(cells))
	}
	for _, c := range []struct {
		i          int
		name, conf string
	}{
		{0, "length.transformer.model.layers=1.seed1", `"layers": 1`},
		{3, "length.transformer.model.layers=2.seed2", `"layers": 2`},
		{4, "length.lstm.model.layers=1.seed1", `"dropout": 0.2`},
		{5, "length.lstm.model.layers=1.seed2", `"lr": 0.003`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if cells[c.i].Name != c.name || cells[c.i].Index != c.i {
				t.Errorf("cell %d is %s (index %d)", c.i, cells[c.i].Name, cells[c.i].Index)
			}
			b, err := s.TrainConfig(cells[c.i])
			if err != nil || !strings.Contains(string(b), c.conf) || !strings.Contains(string(b), `"steps": 5`) {
				t.Errorf("config %s (%v), want %s and steps 5", b, err, c.conf)
			}
		})
	}
}

// TestPresets: a cell starts from its model's preset, else the sweep's,
// else the model's defaults; the sweep's config, the model's and the vary
// values are merged over it.
func TestPresets(t *testing.T) {
	dir := t.TempDir()
	s, err := Load(writeSpec(t, dir, `{"models":["transformer","lstm-attention",{"name":"big","variant":"transformer","preset":"paper","config":{"lr":0.002}}],
		"seeds":[1],"tasks":["length"],"preset":"cpu-small","config":{"steps":300,"model":{"max_tgt_len":50}},"vary":[{"key":"model.dim","values":[32]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Load(writeSpec(t, dir, `{"models":["transformer"],"seeds":[1],"tasks":["length"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec          *Spec
		cell, preset  string
		layers, dim   int
		steps, maxTgt int
		lr            float64
		schedule      string
	}{
		{s, "length.transformer.model.dim=32.seed1", "cpu-small", 2, 32, 300, 50, 5e-3, "polynomial"},
		{s, "length.lstm-attention.model.dim=32.seed1", "cpu-small", 1, 32, 300, 50, 0.01, "polynomial"},
		{s, "length.big.model.dim=32.seed1", "paper", 3, 32, 300, 50, 0.002, ""},
		{plain, "length.transformer.seed1", "", 3, 256, 10000, 136, 1e-3, ""},
	} {
		t.Run(c.cell, func(t *testing.T) {
			cell, err := c.spec.Find(c.cell)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := c.spec.CellConfig(cell)
			if err != nil {
				t.Fatal(err)
			}
			m := cfg.Model
			if got := c.spec.CellPreset(cell); got != c.preset || cfg.Preset != c.preset {
				t.Errorf("preset %q (config %q), want %q", got, cfg.Preset, c.preset)
			}
			if m.Layers != c.layers || m.Dim != c.dim || cfg.Steps != c.steps || m.MaxTgtLen != c.maxTgt || cfg.LR != c.lr || cfg.Schedule != c.schedule {
				t.Errorf("layers %d dim %d steps %d max_tgt %d lr %g schedule %q; want %d %d %d %d %g %q",
					m.Layers, m.Dim, cfg.Steps, m.MaxTgtLen, cfg.LR, cfg.Schedule, c.layers, c.dim, c.steps, c.maxTgt, c.lr, c.schedule)
			}
		})
	}
}

// TestGlob: a glob dataset is one dataset per matching folder, sorted,
// named by the prefix and the folder's name.
func TestGlob(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"s10", "s2", "other"} {
		if err := os.MkdirAll(filepath.Join(dir, "splits", d), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"train.jsonl", "test.jsonl"} {
			if err := os.WriteFile(filepath.Join(dir, "splits", d, f), []byte("{}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	s, err := Load(writeSpec(t, dir, `{"models":["transformer"],"seeds":[1],"datasets":[{"name":"covr-","glob":"splits/s*"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range s.Cells() {
		names = append(names, c.Name)
	}
	if got, want := strings.Join(names, " "), "covr-s10.transformer.seed1 covr-s2.transformer.seed1"; got != want {
		t.Errorf("cells %s, want %s", got, want)
	}
}

// TestScript: the array lists only the cells to run, throttled with %K,
// and each index maps to its cell's name.
func TestScript(t *testing.T) {
	cells := []Cell{{Index: 0, Name: "a.m.seed1"}, {Index: 1, Name: "a.m.seed2"}, {Index: 2, Name: "b.m.seed1"}}
	for _, c := range []struct {
		name string
		todo []int
		s    Slurm
		want []string
	}{
		{"all", []int{0, 1, 2}, Slurm{}, []string{"#SBATCH --array=0,1,2\n", "  b.m.seed1\n", `--cell "${cells[$SLURM_ARRAY_TASK_ID]}"`}},
		{"throttled", []int{1, 2}, Slurm{MaxRunning: 4, Partition: "gpu", Gres: "gpu:1", Time: "02:00:00", Mem: "16G", Extra: []string{"--account=lab"}},
			[]string{"--array=1,2%4\n", "--partition=gpu\n", "--gres=gpu:1\n", "--time=02:00:00\n", "--mem=16G\n", "#SBATCH --account=lab\n"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Script("/bin/compbench", "/tmp/out", "demo", cells, c.todo, c.s)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("script lacks %q:\n%s", w, got)
				}
			}
		})
	}
	for _, c := range []struct {
		name string
		s    Slurm
	}{{"bad time", Slurm{Time: "2h"}}, {"bad extra", Slurm{Extra: []string{"account=lab"}}}, {"quote", Slurm{Partition: "a b"}}} {
		t.Run(c.name, func(t *testing.T) {
			if c.s.Check() == nil {
				t.Errorf("%+v accepted", c.s)
			}
		})
	}
}

// TestExperiments: every sweep file under experiments/ is valid. Their
// split folders are made beforehand (docs/sweep.md), so datasets are
// pointed at a stand-in file here.
func TestExperiments(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "experiments", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sweep files under experiments/ (%v)", err)
	}
	stand := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(stand, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			for i := range s.Datasets {
				s.Datasets[i] = Dataset{Name: s.Datasets[i].Name, Train: stand, Dev: stand, Test: stand}
			}
			if err := s.Validate(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
