package data

import (
	"os"
	"path/filepath"
	"strings"
)

// removeStaleTemps deletes the temporaries that earlier writes of dest left
// beside it (".NAME.tmp-DIGITS", the names Create gives them): a process
// killed by SIGKILL, the OOM killer or a power loss cannot clean up, and
// each temporary may be as large as the output. Only regular files with
// exactly that name pattern are touched.
func removeStaleTemps(dest string) {
	dir, base := filepath.Split(dest)
	if dir == "" {
		dir = "."
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := "." + base + ".tmp-"
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" || !e.Type().IsRegular() {
			continue
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}
