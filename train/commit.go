package train

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// A checkpoint is committed in three moves so that a crash at any instant
// leaves either the previous checkpoint or the new one, never a mix:
//
//  1. every file of the checkpoint is written and fsynced in a fresh
//     staging folder RUN/.checkpoint-tmp-*;
//  2. the staging folder is renamed to RUN/.checkpoint-pending and RUN is
//     fsynced: this single rename is the commit point;
//  3. the pending files are renamed over RUN's own (state.json last) and
//     the emptied folder removed.
//
// A run that finds .checkpoint-pending (the process died in move 3) finishes
// the move before anything else; a staging folder (death in move 1) is an
// uncommitted checkpoint and is deleted.
const (
	pendingDir    = ".checkpoint-pending"
	stagingPrefix = ".checkpoint-tmp-"
)

// CheckpointPending reports whether the run in dir stopped while moving a
// checkpoint into place: train --resume finishes the move first, so the
// run is not finished whatever its state.json says.
func CheckpointPending(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, pendingDir))
	return err == nil
}

// checkpointFiles are the files a checkpoint may hold, in install order:
// state.json names the step of the others, so it moves last.
var checkpointFiles = []string{ModelFile, OptimFile, BestFile, StateFile}

// pauseEnv names a test-only hook: a duration slept before each move of a
// checkpoint write, so a test's SIGKILL can be aimed inside one. Unset (the
// normal case) it costs nothing.
const pauseEnv = "COMPBENCH_TEST_CHECKPOINT_PAUSE"

var checkpointPause = testPause(pauseEnv)

// stepPauseEnv names a test-only hook like pauseEnv: a duration slept after
// each training step, so a test's signal can land between checkpoints.
const stepPauseEnv = "COMPBENCH_TEST_STEP_PAUSE"

var stepPauseTime = testPause(stepPauseEnv)

// testPause reads a test hook's duration from env: 0 unless it is set to a
// duration of at most a second.
func testPause(env string) time.Duration {
	d, err := time.ParseDuration(os.Getenv(env))
	if err != nil || d < 0 || d > time.Second {
		return 0
	}
	return d
}

func stepPause() {
	if stepPauseTime > 0 {
		time.Sleep(stepPauseTime)
	}
}

func pause() {
	if checkpointPause > 0 {
		time.Sleep(checkpointPause)
	}
}

// writeSynced creates path (it must not exist), writes it through fill
// and fsyncs it, so a later rename publishes complete bytes even across a
// power loss.
func writeSynced(path string, fill func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return fillSynced(f, fill)
}

// fillSynced writes f through fill, fsyncs and closes it; on failure f is
// removed.
func fillSynced(f *os.File, fill func(io.Writer) error) error {
	bw := bufio.NewWriterSize(f, 1<<20)
	err := fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(0o644) // os.CreateTemp makes 0600 files; runs are shared
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	return nil
}

// replaceSynced atomically replaces path with the bytes fill writes: a
// temporary file beside it, fsynced, renamed over it, the folder fsynced.
func replaceSynced(path string, fill func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := fillSynced(tmp, fill); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return syncDir(dir)
}

// syncDir makes the renames and removals inside dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	err = d.Sync()
	if errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOTSUP) {
		// Some file systems (network mounts) cannot sync a folder;
		// the renames are then as durable as they make them.
		err = nil
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// commitCheckpoint writes the files (name -> writer) as one checkpoint of
// dir, following the three moves above.
func commitCheckpoint(dir string, files map[string]func(io.Writer) error) error {
	stage, err := os.MkdirTemp(dir, stagingPrefix)
	if err != nil {
		return err
	}
	for _, name := range checkpointFiles {
		fill, ok := files[name]
		if !ok {
			continue
		}
		pause()
		if err := writeSynced(filepath.Join(stage, name), fill); err != nil {
			os.RemoveAll(stage)
			return err
		}
	}
	if err := syncDir(stage); err != nil {
		os.RemoveAll(stage)
		return err
	}
	pause()
	if err := os.Rename(stage, filepath.Join(dir, pendingDir)); err != nil {
		os.RemoveAll(stage)
		return fmt.Errorf("commit: %w", err)
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	return installPending(dir)
}

// installPending finishes move 3: it renames what is left in
// dir/.checkpoint-pending over dir's files, state.json last, and removes
// the folder. It may run any number of times; without a pending folder it
// does nothing.
func installPending(dir string) error {
	pd := filepath.Join(dir, pendingDir)
	if _, err := os.Stat(pd); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	for _, name := range checkpointFiles {
		src := filepath.Join(pd, name)
		if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		pause()
		if err := os.Rename(src, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("install checkpoint: %w", err)
		}
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	pause()
	if err := os.Remove(pd); err != nil {
		return fmt.Errorf("install checkpoint: %w", err)
	}
	return syncDir(dir)
}

// checkpointPath is where the current checkpoint's file name lives: in the
// pending folder when a committed checkpoint awaits installation.
func checkpointPath(dir, name string) string {
	p := filepath.Join(dir, pendingDir, name)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return filepath.Join(dir, name)
}

// removeStale deletes what a killed process left half-written in dir:
// uncommitted staging folders and the temporaries of the run's own files.
// Only names this package creates are touched.
func removeStale(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range ents {
		n := e.Name()
		stale := e.IsDir() && strings.HasPrefix(n, stagingPrefix)
		for _, f := range runFiles {
			if !e.IsDir() && strings.HasPrefix(n, "."+f+".tmp-") {
				stale = true
			}
		}
		if stale {
			if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
				return fmt.Errorf("remove stale %s: %w", n, err)
			}
		}
	}
	return nil
}
