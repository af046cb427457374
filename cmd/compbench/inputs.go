package main

import (
	"path/filepath"

	"compbench/data"
	"compbench/data/split"
	"compbench/lm"
	"compbench/train"
)

// checkNotInput refuses, as a usage error, an output that is one of the
// command's inputs (data.CheckNotInput). Commands call it before they read
// or write anything, so a refused command leaves every file as it was.
func checkNotInput(outputs, inputs []data.Named) error {
	if err := data.CheckNotInput(outputs, inputs); err != nil {
		return &usageError{msg: err.Error()}
	}
	return nil
}

// files names paths given by one flag; empty paths are left out.
func files(flag string, paths ...string) []data.Named {
	var out []data.Named
	for _, p := range paths {
		if p != "" {
			out = append(out, data.Named{Flag: flag, Path: p})
		}
	}
	return out
}

// under names a folder given by one flag and the files names inside it
// that a command reads or writes; nothing for an empty dir.
func under(flag, dir string, names []string) []data.Named {
	if dir == "" {
		return nil
	}
	out := files(flag, dir)
	for _, f := range names {
		out = append(out, data.Named{Flag: flag, Path: filepath.Join(dir, f)})
	}
	return out
}

// runPaths names a run folder and every file a run keeps in it: what
// predict and finetune read from an input run, and what train and finetune
// may replace (--force) in an output run.
func runPaths(flag, dir string) []data.Named { return under(flag, dir, train.RunFiles()) }

// lmPaths names a GPT-2 folder and the files score reads from it.
func lmPaths(flag, dir string) []data.Named { return under(flag, dir, lm.FolderFiles()) }

// splitPaths names a split folder and the files split.Write puts in it.
func splitPaths(flag, dir string) []data.Named { return under(flag, dir, split.Files()) }

// join concatenates lists of named paths.
func join(lists ...[]data.Named) []data.Named {
	var out []data.Named
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// checkTrainOutputs refuses a train run folder that is, or would replace,
// one of train's inputs. A resumed run rewrites its own files by design, so
// then only the data files are checked against them.
func checkTrainOutputs(out string, resume bool, trainPath, devPath, config, initEnc string) error {
	outs := runPaths("--out", out)
	ins := join(files("--train", trainPath), files("--dev", devPath), runPaths("--init-encoder", initEnc))
	if resume {
		outs = outs[1:]
	} else {
		ins = append(ins, files("--config", config)...)
	}
	return checkNotInput(outs, ins)
}
