package main

import (
	"flag"

	"compbench/models"
)

// graphCacheFlag registers --graph-cache-mb on fs: the byte bound of a
// Transformer's compiled-graph cache (docs/graph-cache.md). A memory
// setting of the process; results and config.json do not depend on it.
func graphCacheFlag(fs *flag.FlagSet) *int64 {
	return fs.Int64("graph-cache-mb", 0, "estimated MB of compiled Transformer graphs kept in memory (0: 2048); lower it to cap memory, at the cost of rebuilding graphs")
}

// maxGraphCacheMB keeps mb<<20 within an int64.
const maxGraphCacheMB = 1 << 40

// setGraphCache applies --graph-cache-mb to the Transformers made from
// now on; 0 restores the default. A negative or absurd value is a usage
// error.
func setGraphCache(mb int64) error {
	if mb < 0 || mb > maxGraphCacheMB {
		return usagef("--graph-cache-mb %d: want 0 (default) or a size in MB up to %d", mb, int64(maxGraphCacheMB))
	}
	models.SetGraphBudget(mb << 20)
	return nil
}
