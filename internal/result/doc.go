// Package result is the results.json contract: a versioned Run with its environment, spec
// and points, each point carrying what was varied, what was measured and the per-second
// series. It also writes results.csv. Changing a field's meaning needs a Schema bump.
package result
