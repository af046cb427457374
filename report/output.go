package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"compbench/data"
)

// Output is where a report goes.
type Output struct {
	// Format is md, csv or html.
	Format string
	// Out is the file to write ("": the caller prints the page).
	Out string
	// Figures is the folder for each figure's files ("": none).
	Figures string
	// Force replaces existing files.
	Force bool
}

// Emit renders r as o.Format and writes the figure files and o.Out all
// or nothing: they are renamed into place together, and an existing one
// (without Force) stops the report before any is. Without o.Out it
// returns the page.
func (r *Report) Emit(o Output) ([]byte, error) {
	var figs []Figure
	var err error
	if o.Format == "html" || o.Figures != "" {
		if figs, err = r.Figures(); err != nil {
			return nil, fmt.Errorf("figures: %w", err)
		}
	}
	var b bytes.Buffer
	if err := r.Write(&b, o.Format, figs); err != nil {
		return nil, err
	}
	set := data.NewOutputSet(o.Force)
	defer set.Abort() // no-op after Commit
	if o.Figures != "" {
		if err := WriteFigures(set, o.Figures, figs); err != nil {
			return nil, err
		}
	}
	if o.Out == "" {
		return b.Bytes(), set.Commit()
	}
	w, err := set.Create(o.Out)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(b.Bytes()); err != nil {
		return nil, err
	}
	return nil, set.Commit()
}

// Write renders the report in format md, csv or html (with figs inline).
func (r *Report) Write(w io.Writer, format string, figs []Figure) error {
	switch format {
	case "md":
		return r.WriteMarkdown(w)
	case "csv":
		return r.WriteCSV(w)
	case "html":
		return r.WriteHTML(w, figs)
	}
	return fmt.Errorf("unknown format %q", format)
}

// WriteFigures adds every drawn figure to set in each format, as
// dir/NAME.svg, .pdf and .png.
func WriteFigures(set *data.OutputSet, dir string, figs []Figure) error {
	for i := range figs {
		if figs[i].Omitted != "" {
			continue
		}
		for _, format := range Formats {
			body, err := figs[i].Render(format)
			if err != nil {
				return err
			}
			w, err := set.Create(filepath.Join(dir, figs[i].Name+"."+format))
			if err != nil {
				return err
			}
			if _, err := w.Write(body); err != nil {
				return err
			}
		}
	}
	return nil
}

// Inside reports whether path is the folder dir or lies inside it, however
// spelled (symbolic links, "..", another name for the same folder): a
// report must not write where the sweep or run it reads lives, since the
// sweep's files are its input and a sweep still running writes there. A
// dir that is not a folder holds nothing.
func Inside(path, dir string) bool {
	dst, err := os.Stat(dir)
	if err != nil {
		return false
	}
	p := resolvePath(path)
	for {
		if st, err := os.Stat(p); err == nil && os.SameFile(st, dst) {
			return true
		}
		parent := filepath.Dir(p)
		if parent == p {
			return false
		}
		p = parent
	}
}

// resolvePath is path made absolute with the symbolic links of its
// longest existing part resolved, so that a ".." after a link climbs from
// where the link points, as the kernel's does; the missing rest, which
// holds no link, is joined on.
func resolvePath(path string) string {
	if !filepath.IsAbs(path) {
		if wd, err := os.Getwd(); err == nil {
			path = wd + string(filepath.Separator) + path // not Join: it would clean ".." before links are read
		}
	}
	rest := ""
	for head := path; ; {
		if resolved, err := filepath.EvalSymlinks(head); err == nil {
			return filepath.Join(resolved, rest)
		}
		i := strings.LastIndexByte(head, filepath.Separator)
		switch {
		case i < 0:
			return filepath.Clean(path)
		case i == 0:
			return filepath.Join(head[:1], head[1:], rest)
		}
		head, rest = head[:i], filepath.Join(head[i+1:], rest)
	}
}
