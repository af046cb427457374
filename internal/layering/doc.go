// Package layering holds the test that pins compbench's import floors: data
// flows one way, from records through ops and the engine to models,
// training, sweeps, reports and the command (docs/engine.md, "Package
// map"). It has no code of its own.
package layering
