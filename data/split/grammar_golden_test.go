package split

import "flag"

// update is the package's one -update flag, for every golden file under
// testdata/ (declared once here so other test files can use it).
var update = flag.Bool("update", false, "rewrite golden files")
