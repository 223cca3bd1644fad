// Package predict is `wirelab predict`: it reads the --from runs, picks their series, fits
// one profile per variant (model) and prints what they do on other links and machines
// (report's tables and chart, or JSON); with --crossover the rate below which compression
// pays, with --against the model against another run's points, and on sync-study runs
// each mode's commit term read at another round trip. It owns its flags (AddFlags,
// Flags.Options); model does the arithmetic and report draws the tables.
package predict
