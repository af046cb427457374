package cfq

import (
	"archive/zip"
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"compbench/data"
)

// A text release is a split as CFQ's preprocessing script writes it
// (Keysers et al. 2020, §5; preprocess_main.py in google-research/cfq):
// ROOT/train/train_encode.txt and train_decode.txt, the same for dev and
// test, the questions and their queries one example a line, in the same
// order, preprocessed already (punctuation spaced, "ns:" dropped, "m."
// written "m_"). CFQ's MCD1 release is a zip of such a folder
// (data/mcd1/...) and keeps no rule trees.

// maxTextLine bounds one line of a release, as data bounds a record line.
const maxTextLine = 64 << 20

// maxTextDepth bounds how deep under a folder the release is looked for,
// so a folder such as / is not walked whole.
const maxTextDepth = 4

// TextRelease is an opened text release.
type TextRelease struct {
	fsys   fs.FS
	root   string // folder of train/, dev/, test/ inside fsys
	closer io.Closer
	size   int64 // bytes of the six files, for progress
}

// textFile names one file of a release: part's questions or queries.
func textFile(root string, part int8, side string) string {
	return path.Join(root, PartNames[part], PartNames[part]+"_"+side+".txt")
}

// OpenText opens a text release: a zip file, or a folder holding the
// release's root (at most a few folders down). Exactly one root must be
// found, with all six files.
func OpenText(p string) (*TextRelease, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	t := &TextRelease{}
	var names []string
	sizes := map[string]int64{}
	if st.IsDir() {
		t.fsys = os.DirFS(p)
		err := fs.WalkDir(t.fsys, ".", func(name string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && name != "." && strings.Count(name, "/") >= maxTextDepth {
				return fs.SkipDir
			}
			if d.Type().IsRegular() {
				names = append(names, name)
				if info, err := d.Info(); err == nil {
					sizes[name] = info.Size()
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	} else {
		// Refused before the open, which would wait for a FIFO's writer.
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a folder or a zip file", p)
		}
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		z, err := zip.NewReader(f, st.Size())
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("%s: not a folder or a zip file: %w", p, err)
		}
		t.fsys, t.closer = z, f
		for _, zf := range z.File {
			names = append(names, zf.Name)
			sizes[zf.Name] = int64(min(zf.UncompressedSize64, 1<<62))
		}
	}
	if err := t.findRoot(p, names, sizes); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// findRoot picks the one folder that holds train/train_encode.txt and
// checks that it holds the other five files.
func (t *TextRelease) findRoot(p string, names []string, sizes map[string]int64) error {
	have := map[string]bool{}
	var roots []string
	for _, n := range names {
		have[n] = true
		if r, ok := strings.CutSuffix("/"+n, "/"+textFile("", Train, "encode")); ok {
			roots = append(roots, path.Clean("./"+r))
		}
	}
	slices.Sort(roots)
	switch len(roots) {
	case 0:
		return fmt.Errorf("%s: no %s: want a text release (train/, dev/ and test/ with PART_encode.txt and PART_decode.txt)", p, textFile("", Train, "encode"))
	case 1:
	default:
		return fmt.Errorf("%s: holds %d text releases (%s and %s): name the folder of one", p, len(roots), roots[0], roots[1])
	}
	t.root = roots[0]
	for part := Train; part <= Test; part++ {
		for _, side := range []string{"encode", "decode"} {
			f := textFile(t.root, part, side)
			if !have[f] {
				return fmt.Errorf("%s: no %s beside %s", p, f, textFile(t.root, Train, "encode"))
			}
			t.size += sizes[f]
		}
	}
	return nil
}

// Size is the bytes of the release's six files (uncompressed).
func (t *TextRelease) Size() int64 { return t.size }

// Close closes the zip file, if any.
func (t *TextRelease) Close() error {
	if t.closer == nil {
		return nil
	}
	return t.closer.Close()
}

// Each streams part's examples in line order as records: id PART-N (N the
// line, from 1), input the question and output the query as written, runs
// of spaces made one. n is the bytes the example took. A blank line, or
// files of different lengths, are errors: the two files are parallel, so
// either means they no longer line up.
func (t *TextRelease) Each(part int8, fn func(rec *data.Record, n int64) error) error {
	qf, sf := textFile(t.root, part, "encode"), textFile(t.root, part, "decode")
	q, err := t.fsys.Open(qf)
	if err != nil {
		return err
	}
	defer q.Close()
	s, err := t.fsys.Open(sf)
	if err != nil {
		return err
	}
	defer s.Close()
	qs, ss := textScanner(q), textScanner(s)
	for line := 1; ; line++ {
		qok, sok := qs.Scan(), ss.Scan()
		if err := textErr(qs, qf, line); err != nil {
			return err
		}
		if err := textErr(ss, sf, line); err != nil {
			return err
		}
		if !qok && !sok {
			if line == 1 {
				return fmt.Errorf("%s: no examples", qf)
			}
			return nil
		}
		if qok != sok {
			short := qf
			if qok {
				short = sf
			}
			return fmt.Errorf("%s and %s differ in length: %s ends at line %d", qf, sf, short, line-1)
		}
		in, out := strings.Fields(qs.Text()), strings.Fields(ss.Text())
		if len(in) == 0 || len(out) == 0 {
			f := qf
			if len(in) != 0 {
				f = sf
			}
			return fmt.Errorf("%s: line %d is blank", f, line)
		}
		rec := data.Record{ID: fmt.Sprintf("%s-%d", PartNames[part], line), Input: strings.Join(in, " "), Output: strings.Join(out, " ")}
		if err := fn(&rec, int64(len(qs.Bytes())+len(ss.Bytes())+2)); err != nil {
			return err
		}
	}
}

func textScanner(r io.Reader) *bufio.Scanner {
	sc := bufio.NewScanner(bufio.NewReaderSize(r, 1<<20))
	sc.Buffer(make([]byte, 0, 1<<16), maxTextLine)
	return sc
}

func textErr(sc *bufio.Scanner, name string, line int) error {
	err := sc.Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("%s: line %d: longer than %d MiB", name, line, maxTextLine>>20)
	}
	return fmt.Errorf("%s: line %d: %w", name, line, err)
}
