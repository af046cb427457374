package sweep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"compbench/data"
)

// Slurm are the job array's settings; empty ones are left to the
// cluster's defaults.
type Slurm struct {
	Partition string
	Gres      string
	// Time is the limit per array task, HH:MM:SS or D-HH:MM:SS.
	Time string
	Mem  string
	// CPUs is --cpus-per-task (0: the cluster's default).
	CPUs int
	// MaxRunning throttles the array to K tasks at once (%K); 0: no limit.
	MaxRunning int
	// Extra are more sbatch options, each written as one #SBATCH line.
	Extra []string
}

var slurmTime = regexp.MustCompile(`^(\d+-)?\d{1,3}(:\d\d){0,2}$`)

// Check refuses values sbatch would refuse later, on the login node, and
// values an #SBATCH line cannot carry (CheckDirective).
func (s Slurm) Check() error {
	if s.Time != "" && !slurmTime.MatchString(s.Time) {
		return fmt.Errorf("--time %q: want HH:MM:SS or D-HH:MM:SS", s.Time)
	}
	if s.CPUs < 0 || s.MaxRunning < 0 {
		return errors.New("--cpus-per-task and --max-running must be >= 0")
	}
	for _, o := range []struct{ flag, v string }{{"--partition", s.Partition}, {"--gres", s.Gres}, {"--mem", s.Mem}} {
		if err := CheckDirective(o.flag, o.v); err != nil {
			return err
		}
	}
	for _, e := range s.Extra {
		if !strings.HasPrefix(e, "-") {
			return fmt.Errorf("--sbatch-arg %q: want one sbatch option such as --account=lab", e)
		}
		if err := CheckDirective("--sbatch-arg", e); err != nil {
			return err
		}
	}
	return nil
}

// CheckDirective refuses a value that an #SBATCH line cannot carry as
// written. Such a line cannot be quoted for the shell: a line break would
// end the directive and make the rest a command of the job, and sbatch
// reads the line's words itself, splitting at blanks and taking quotes,
// backslashes and # (a comment) as syntax.
func CheckDirective(what, v string) error {
	for _, r := range v {
		switch {
		case r < 0x20 || r == 0x7f:
			return fmt.Errorf("%s %q: holds a control character (a line break, tab or NUL), which an #SBATCH line cannot carry", what, v)
		case unicode.IsSpace(r):
			return fmt.Errorf("%s %q: holds a blank, which would split the #SBATCH line's option", what, v)
		case strings.ContainsRune(`'"\#`, r):
			return fmt.Errorf("%s %q: holds %q, which sbatch reads as syntax on an #SBATCH line", what, v, r)
		}
	}
	return nil
}

// CheckOut refuses an output folder whose absolute path the job array's
// #SBATCH --output line cannot carry: CheckDirective's characters, and %,
// which Slurm expands in file names (%A, %a, %j).
func CheckOut(out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	if err := CheckDirective("--out", abs); err != nil {
		return fmt.Errorf("%w; choose an --out whose absolute path has none", err)
	}
	if strings.Contains(abs, "%") {
		return fmt.Errorf("--out %q: holds %%, which Slurm expands in the #SBATCH --output file name; choose an --out whose absolute path has none", abs)
	}
	return nil
}

// Script is the sbatch file of a job array over cells: array index i runs
// cells[i] with "SELF sweep --file OUT/sweep.json --out OUT --cell NAME".
// Only the indices in todo are submitted, so resubmitting skips the
// finished cells.
func Script(self, out, name string, cells []Cell, todo []int, s Slurm) (string, error) {
	if len(todo) == 0 {
		return "", errors.New("no cells to submit")
	}
	if err := CheckOut(out); err != nil {
		return "", err
	}
	if err := s.Check(); err != nil {
		return "", err
	}
	out, err := filepath.Abs(out)
	if err != nil {
		return "", err
	}
	// The exec line quotes the binary's path for the shell; a NUL cannot be
	// quoted, and no line break is let in, so that every line of the script
	// is one directive or one command.
	if strings.ContainsFunc(self, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", fmt.Errorf("the compbench binary's path %q holds a control character, which the sbatch script does not carry", self)
	}
	ids := make([]string, len(todo))
	for i, t := range todo {
		ids[i] = strconv.Itoa(t)
	}
	array := strings.Join(ids, ",")
	if s.MaxRunning > 0 {
		array += "%" + strconv.Itoa(s.MaxRunning)
	}
	var b bytes.Buffer
	b.WriteString("#!/bin/bash\n")
	job := "compbench-sweep"
	if name != "" {
		job = "compbench-" + unsafeName.ReplaceAllString(name, "_")
	}
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", job)
	fmt.Fprintf(&b, "#SBATCH --array=%s\n", array)
	fmt.Fprintf(&b, "#SBATCH --output=%s/%%A_%%a.out\n", filepath.Join(out, "slurm"))
	// One task per cell: the cell's stages run one after another.
	b.WriteString("#SBATCH --ntasks=1\n")
	opt := func(flag, v string) {
		if v != "" {
			fmt.Fprintf(&b, "#SBATCH --%s=%s\n", flag, v)
		}
	}
	opt("partition", s.Partition)
	opt("gres", s.Gres)
	opt("time", s.Time)
	opt("mem", s.Mem)
	if s.CPUs > 0 {
		opt("cpus-per-task", strconv.Itoa(s.CPUs))
	}
	for _, e := range s.Extra {
		fmt.Fprintf(&b, "#SBATCH %s\n", e)
	}
	b.WriteString("\n# Written by compbench sweep --slurm. Each array task runs one cell and\n")
	b.WriteString("# writes only inside OUT/cells/NAME; a rerun resumes it from its last checkpoint.\n")
	b.WriteString("cells=(\n")
	for _, c := range cells {
		fmt.Fprintf(&b, "  %s\n", shellQuote(c.Name))
	}
	b.WriteString(")\n")
	fmt.Fprintf(&b, "exec %s sweep --file %s --out %s --cell \"${cells[$SLURM_ARRAY_TASK_ID]}\"\n",
		shellQuote(self), shellQuote(filepath.Join(out, SpecFile)), shellQuote(out))
	return b.String(), nil
}

var shellWord = regexp.MustCompile(`^[A-Za-z0-9_./=+:-]+$`)

// shellQuote makes s one word for bash: left bare when it holds nothing
// the shell reads as syntax, else in single quotes, inside which nothing is
// special but the single quote itself: each closes the quotes, is written
// escaped (\') and reopens them.
func shellQuote(s string) string {
	if shellWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// JobsFile lists the job ids of the submitted arrays, one a line.
const JobsFile = "slurm-jobs.txt"

// Submit runs sbatch --parsable on script and returns the job id; the id
// is appended to OUT/slurm-jobs.txt.
func Submit(ctx context.Context, out, script string) (string, error) {
	sbatch, err := exec.LookPath("sbatch")
	if err != nil {
		return "", errors.New("sbatch not found on PATH: run this on a Slurm login node, or use --local (--dry-run writes the script only)")
	}
	if err := os.MkdirAll(filepath.Join(out, "slurm"), 0o755); err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, sbatch, "--parsable", script)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("sbatch --parsable %s: %v: %s", script, err, strings.TrimSpace(stderr.String()))
	}
	id, _, _ := strings.Cut(strings.TrimSpace(stdout.String()), ";")
	if id == "" {
		return "", fmt.Errorf("sbatch --parsable %s printed no job id (stderr: %s)", script, strings.TrimSpace(stderr.String()))
	}
	f, err := os.OpenFile(filepath.Join(out, JobsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return id, err
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, id)
	return id, err
}

// Queue is the state of the cells' array tasks that Slurm still knows,
// by array index, from squeue (empty where squeue is missing or fails).
func Queue(ctx context.Context, out string) map[int]string {
	q := map[int]string{}
	b, err := data.ReadFileLimit(filepath.Join(out, JobsFile), data.ConfigFile)
	if err != nil {
		return q
	}
	ids := strings.Fields(string(b))
	if len(ids) == 0 {
		return q
	}
	squeue, err := exec.LookPath("squeue")
	if err != nil {
		return q
	}
	// -r lists each array task on its own line: JOBID_INDEX STATE.
	o, err := exec.CommandContext(ctx, squeue, "-h", "-r", "-o", "%i %T", "-j", strings.Join(ids, ",")).Output()
	if err != nil {
		return q
	}
	for _, line := range strings.Split(string(o), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			continue
		}
		_, idx, ok := strings.Cut(f[0], "_")
		if n, err := strconv.Atoi(idx); ok && err == nil {
			q[n] = strings.ToLower(f[1])
		}
	}
	return q
}

// SubmitUnfinished writes OUT/sweep.sbatch, a job array over the cells
// neither finished nor queued, and submits it, or with dry prints it to w
// instead. self is the compbench binary each task runs.
func SubmitUnfinished(ctx context.Context, s *Spec, out, self string, sl Slurm, dry bool, w io.Writer) error {
	cells := s.Cells()
	// Cells whose array task Slurm still holds (pending or running) are
	// left to it.
	queued := Queue(ctx, out)
	var todo []int
	for _, c := range cells {
		if _, busy := queued[c.Index]; !busy && StateOf(c.Dir(out)) != Finished {
			todo = append(todo, c.Index)
		}
	}
	if len(todo) == 0 {
		fmt.Fprintf(w, "sweep: all %d cells are finished or queued (%d); nothing to submit\n", len(cells), len(queued))
		return nil
	}
	script, err := Script(self, out, s.Name, cells, todo, sl)
	if err != nil {
		return err
	}
	path := filepath.Join(out, "sweep.sbatch")
	if err := writeFile(path, []byte(script)); err != nil {
		return err
	}
	if dry {
		fmt.Fprintf(w, "%s\n# submit with: sbatch %s\n", script, path)
		return nil
	}
	id, err := Submit(ctx, out, path)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "sweep: submitted job %s: %d of %d cells (%s); compbench sweep --status %s follows them\n", id, len(todo), len(cells), path, out)
	return nil
}
