package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"compbench/data"
	"compbench/sweep"
)

// slurmCluster starts scripts/slurm_test_cluster.sh's single-node cluster
// in a temporary folder for the test, and stops it (by its PIDs) after.
// It skips the test, saying why, where the cluster cannot run here.
func slurmCluster(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("the test Slurm cluster runs its daemons as root; run as root to test --slurm on a real cluster")
	}
	for _, b := range []string{"munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not found: make sweep-deps installs Debian's slurm-wlm and munge", b)
		}
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "slurm_test_cluster.sh"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Cleanup(func() {
		if b, err := exec.Command(script, "stop", dir).CombinedOutput(); err != nil {
			t.Errorf("stopping the cluster: %v\n%s", err, b)
		}
	})
	if b, err := exec.Command(script, "start", dir).CombinedOutput(); err != nil {
		t.Fatalf("starting the test cluster: %v\n%s", err, b)
	}
	t.Setenv("SLURM_CONF", filepath.Join(dir, "slurm.conf"))
}

// waitCells waits until every cell of the sweep in out is finished or
// failed and returns how many failed, with their error.txt.
func waitCells(t *testing.T, out string, cells []sweep.Cell, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		done, failed := 0, ""
		for _, c := range cells {
			switch sweep.StateOf(c.Dir(out)) {
			case sweep.Finished:
				done++
			case sweep.Failed:
				b, _ := os.ReadFile(filepath.Join(c.Dir(out), sweep.ErrorFile))
				failed += c.Name + ": " + string(b) + "\n"
			}
		}
		if failed != "" {
			t.Fatalf("cells failed:\n%s", failed)
		}
		if done == len(cells) {
			return
		}
		if time.Now().After(deadline) {
			logs, _ := filepath.Glob(filepath.Join(out, "slurm", "*.out"))
			var b strings.Builder
			for _, l := range logs {
				s, _ := os.ReadFile(l)
				b.WriteString(l + ":\n" + string(s))
			}
			st, _ := exec.Command("squeue").CombinedOutput()
			t.Fatalf("%d of %d cells finished after %s\nsqueue:\n%s\n%s", done, len(cells), limit, st, b.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestSweepSlurm runs a 2 models x 2 seeds sweep as a job array on a real
// single-node Slurm cluster and checks the report's n=2 per cell group;
// then it stops a training array task with SIGTERM (scancel, as for a
// preemption or a time limit), resubmits, and checks that the cell
// resumed and ended with the bytes of an uninterrupted local run.
func TestSweepSlurm(t *testing.T) {
	slurmCluster(t)
	sweepEnv(t)
	t.Run("grid", func(t *testing.T) {
		dir := t.TempDir()
		spec := tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer", "lstm-copy"}, "1,2", 4, 0)
		out := filepath.Join(dir, "out")
		var stdout bytes.Buffer
		if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--slurm", "--max-running", "2", "--time", "00:05:00"}, &stdout, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stdout.String(), "submitted job") {
			t.Fatalf("no job submitted: %s", stdout.String())
		}
		s, err := sweep.Load(spec)
		if err != nil {
			t.Fatal(err)
		}
		waitCells(t, out, s.Cells(), 3*time.Minute)
		var md bytes.Buffer
		if err := run(context.Background(), []string{"report", out}, &md, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"| d | transformer | 2 |", "| d | lstm-copy | 2 |"} {
			if !strings.Contains(md.String(), want) {
				t.Errorf("report lacks %q:\n%s", want, md.String())
			}
		}
		stdout.Reset()
		if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--slurm"}, &stdout, &bytes.Buffer{}); err != nil || !strings.Contains(stdout.String(), "nothing to submit") {
			t.Errorf("resubmitting a finished sweep: %v, %s", err, stdout.String())
		}
	})
	t.Run("preempt-resume", func(t *testing.T) {
		dir := t.TempDir()
		spec := tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "3", 300, 25)
		ref, out := filepath.Join(dir, "ref"), filepath.Join(dir, "out")
		if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", ref, "--local"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		s, err := sweep.Load(spec)
		if err != nil {
			t.Fatal(err)
		}
		cell := s.Cells()[0]
		// Each step sleeps a little (results are unchanged), so the stop
		// lands mid-training however fast the machine trains.
		t.Setenv("COMPBENCH_TEST_STEP_PAUSE", "10ms")
		if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--slurm"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		ids, err := os.ReadFile(filepath.Join(out, sweep.JobsFile))
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(2 * time.Minute)
		for {
			st, ok, _ := sweep.ReadTrainState(cell.Dir(out))
			if ok && st.Step >= 25 {
				if st.Step >= 300 {
					t.Fatal("training finished before the stop: make it longer")
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the array task wrote no checkpoint in 2 minutes")
			}
			time.Sleep(20 * time.Millisecond)
		}
		// SIGTERM to every process of the task, as Slurm sends at a
		// time limit or preemption before it kills.
		if b, err := exec.Command("scancel", "--signal=TERM", "--full", strings.TrimSpace(string(ids))).CombinedOutput(); err != nil {
			t.Fatalf("scancel: %v\n%s", err, b)
		}
		for time.Now().Before(deadline) {
			if q, _ := exec.Command("squeue", "-h", "-j", strings.TrimSpace(string(ids))).Output(); len(bytes.TrimSpace(q)) == 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if st := sweep.StateOf(cell.Dir(out)); st != sweep.Started {
			t.Fatalf("stopped cell is %s, want %s", st, sweep.Started)
		}
		if err := run(context.Background(), []string{"sweep", "--file", spec, "--out", out, "--slurm"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
			t.Fatal(err)
		}
		waitCells(t, out, s.Cells(), 2*time.Minute)
		log, _ := os.ReadFile(filepath.Join(cell.Dir(out), sweep.LogFile))
		if !strings.Contains(string(log), "--resume") {
			t.Errorf("the cell did not resume:\n%s", log)
		}
		for _, f := range []string{"model.safetensors", "optim.safetensors", "best.safetensors", "state.json", sweep.TestPreds} {
			a, _ := os.ReadFile(filepath.Join(cell.Dir(ref), f))
			b, err := os.ReadFile(filepath.Join(cell.Dir(out), f))
			if err != nil || !bytes.Equal(a, b) {
				t.Errorf("%s differs from the uninterrupted run's (%v)", f, err)
			}
		}
	})
}

// injections are values that would run a command (touch PWNED) if the
// sbatch script let them end a line, a quoted word or a word: a line
// break, each quote, command substitution, a backtick and ;.
var injections = []struct{ name, v string }{
	{"newline", "x\ntouch PWNED #"},
	{"single quote", "x';touch${IFS}PWNED;'"},
	{"double quote", `x";touch${IFS}PWNED;"`},
	{"command substitution", "x$(touch${IFS}PWNED)"},
	{"backtick", "x`touch${IFS}PWNED`"},
	{"semicolon", "x;touch${IFS}PWNED"},
}

// TestSweepSlurmScriptInjection puts each injection in each value the
// sbatch script carries. Each run either is refused (exit status 2 for a
// flag, 1 for the binary's path) with nothing written, or writes a script
// in which the value is inert: bash -n accepts it, it has only the
// expected lines, each #SBATCH line carries its value whole, and run by
// bash (with exec printing its words) it passes the exact arguments and
// touches nothing.
func TestSweepSlurmScriptInjection(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	type setup struct {
		args []string          // sweep flags besides --file, --out, --slurm, --dry-run
		out  string            // --out
		file string            // --file
		self string            // the binary's path; "" runs the command line
		opts map[string]string // #SBATCH options and the values they must carry
	}
	fields := []struct {
		name string
		make func(t *testing.T, dir, v string) setup
	}{
		{"out", func(t *testing.T, dir, v string) setup {
			return setup{out: filepath.Join(dir, v), file: tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "1", 2, 0)}
		}},
		{"file", func(t *testing.T, dir, v string) setup {
			sub := filepath.Join(dir, v)
			os.MkdirAll(sub, 0o755)
			return setup{out: filepath.Join(dir, "out"), file: tinySweep(t, sub, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "1", 2, 0)}
		}},
		{"binary", func(t *testing.T, dir, v string) setup {
			return setup{out: filepath.Join(dir, "out"), file: tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "1", 2, 0),
				self: filepath.Join(dir, v, "compbench")}
		}},
		{"sweep name", func(t *testing.T, dir, v string) setup {
			f := tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "1", 2, 0)
			b, _ := os.ReadFile(f)
			name, _ := json.Marshal(v)
			os.WriteFile(f, bytes.Replace(b, []byte(`"name":"tiny"`), append([]byte(`"name":`), name...), 1), 0o644)
			return setup{out: filepath.Join(dir, "out"), file: f}
		}},
		{"dataset name", func(t *testing.T, dir, v string) setup {
			return setup{out: filepath.Join(dir, "out"), file: tinySweep(t, dir, map[string]string{v: tinyData(t)}, []string{"transformer"}, "1", 2, 0)}
		}},
	}
	for _, o := range []struct{ flag, prefix string }{{"partition", ""}, {"gres", ""}, {"mem", ""}, {"time", ""}, {"sbatch-arg", "--comment="}} {
		fields = append(fields, struct {
			name string
			make func(t *testing.T, dir, v string) setup
		}{"--" + o.flag, func(t *testing.T, dir, v string) setup {
			s := setup{out: filepath.Join(dir, "out"), file: tinySweep(t, dir, map[string]string{"d": tinyData(t)}, []string{"transformer"}, "1", 2, 0),
				args: []string{"--" + o.flag, o.prefix + v}}
			name, val := o.flag, v
			if o.prefix != "" {
				name, val, _ = strings.Cut(strings.TrimPrefix(o.prefix+v, "--"), "=")
			}
			s.opts = map[string]string{name: val}
			return s
		}})
	}
	for _, f := range fields {
		for _, inj := range injections {
			t.Run(f.name+"/"+inj.name, func(t *testing.T) {
				dir := t.TempDir()
				s := f.make(t, dir, inj.v)
				var stdout, stderr bytes.Buffer
				var err error
				if s.self == "" {
					err = run(context.Background(), append([]string{"sweep", "--file", s.file, "--out", s.out, "--slurm", "--dry-run"}, s.args...), &stdout, &stderr)
				} else {
					var spec *sweep.Spec
					if spec, err = sweep.Load(s.file); err != nil {
						t.Fatal(err)
					}
					os.MkdirAll(s.out, 0o755)
					err = sweep.SubmitUnfinished(context.Background(), spec, s.out, s.self, sweep.Slurm{}, true, &stdout)
				}
				script := filepath.Join(s.out, "sweep.sbatch")
				if err != nil {
					want := 2
					if s.self != "" {
						want = 1
					}
					if code := exitCode(err, &stderr); code != want || strings.Count(stderr.String(), "\n") != 1 {
						t.Fatalf("exit %d, stderr %q: want %d and one line", code, stderr.String(), want)
					}
					if data.Exists(script) || (s.self == "" && data.Exists(s.out)) {
						t.Errorf("a refused sweep wrote %s", s.out)
					}
					return
				}
				// An #SBATCH line carries --out and the flags as written:
				// it cannot take a line break or quotes, and --time is a
				// duration; the binary's path is quoted, but not a line break.
				onDirective := f.name == "out" || strings.HasPrefix(f.name, "--")
				if f.name == "--time" || (onDirective && strings.ContainsAny(inj.v, "\n'\"")) || (f.name == "binary" && strings.Contains(inj.v, "\n")) {
					t.Fatalf("accepted %q", inj.v)
				}
				b, err := os.ReadFile(script)
				if err != nil {
					t.Fatal(err)
				}
				self := s.self
				if self == "" {
					if self, err = os.Executable(); err != nil {
						t.Fatal(err)
					}
				}
				spec, err := sweep.Load(s.file)
				if err != nil {
					t.Fatal(err)
				}
				checkScript(t, string(b), script, self, s.out, spec.Cells()[0].Name, s.opts)
				if f.name == "file" && strings.Contains(string(b), inj.v) {
					t.Errorf("the script names --file's path; it should name OUT/%s:\n%s", sweep.SpecFile, b)
				}
			})
		}
	}
}

// checkScript checks that the sbatch script at path is well formed and
// inert: bash -n accepts it; every line has one of the expected shapes;
// each #SBATCH option of opts is on one line with its value whole; and
// run by bash as array task 0, with exec printing its words, it runs self
// with exactly the cell's arguments and writes no file.
func checkScript(t *testing.T, script, path, self, out, cell string, opts map[string]string) {
	t.Helper()
	if b, err := exec.Command("bash", "-n", path).CombinedOutput(); err != nil {
		t.Fatalf("bash -n: %v: %s\n%s", err, b, script)
	}
	shapes := []*regexp.Regexp{
		regexp.MustCompile(`^#!/bin/bash$`),
		regexp.MustCompile(`^#SBATCH --(job-name|array|output|ntasks|partition|gres|time|mem|cpus-per-task|comment)=[^\s'"\\#]+$`),
		regexp.MustCompile(`^$`),
		regexp.MustCompile(`^# (Written by compbench sweep --slurm|writes only inside OUT/cells/NAME)`),
		regexp.MustCompile(`^cells=\($`),
		regexp.MustCompile(`^  [A-Za-z0-9_.=+-]+$`),
		regexp.MustCompile(`^\)$`),
		regexp.MustCompile(`^exec .* sweep --file .* --out .* --cell "\$\{cells\[\$SLURM_ARRAY_TASK_ID\]\}"$`),
	}
	execs := 0
	for _, line := range strings.Split(strings.TrimSuffix(script, "\n"), "\n") {
		ok := false
		for _, re := range shapes {
			ok = ok || re.MatchString(line)
		}
		if !ok {
			t.Errorf("unexpected line %q in\n%s", line, script)
		}
		if strings.HasPrefix(line, "exec ") {
			execs++
		}
	}
	if execs != 1 {
		t.Errorf("%d exec lines, want 1:\n%s", execs, script)
	}
	for name, v := range opts {
		if !strings.Contains(script, "\n#SBATCH --"+name+"="+v+"\n") {
			t.Errorf("no line #SBATCH --%s=%s in\n%s", name, v, script)
		}
	}
	wd := t.TempDir()
	cmd := exec.Command("bash", "-c", `exec() { printf '%s\0' "$@"; exit 0; }; . "$1"`, "_", path)
	cmd.Dir = wd
	cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=0")
	got, err := cmd.Output()
	if err != nil {
		t.Fatalf("running the script: %v\n%s", err, script)
	}
	abs, _ := filepath.Abs(out)
	want := strings.Join([]string{self, "sweep", "--file", filepath.Join(abs, sweep.SpecFile), "--out", abs, "--cell", cell}, "\x00") + "\x00"
	if string(got) != want {
		t.Errorf("the script ran %q, want %q", strings.Split(string(got), "\x00"), strings.Split(want, "\x00"))
	}
	if left, _ := os.ReadDir(wd); len(left) > 0 {
		t.Errorf("running the script wrote %v", left)
	}
}
