package tunnel

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

// EndCommand is the command line of `wirelab tunnel entry|exit`, kept here (not in cli)
// so that what starts an end (Config.Args) and what parses it share one table, endFlags.
type EndCommand struct {
	fs   *flag.FlagSet
	cfg  Config
	file string
}

// AddEndFlags registers the end flags and --config on fs, each at its default.
func AddEndFlags(fs *flag.FlagSet, role Role) *EndCommand {
	e := &EndCommand{fs: fs, cfg: Config{Role: role}}
	for i := range endFlags {
		f := &endFlags[i]
		if f.def != "" {
			if err := f.set(&e.cfg, f.def); err != nil {
				panic(fmt.Sprintf("tunnel flag --%s: default %q: %v", f.name, f.def, err))
			}
		}
		var v flag.Value = flagValue{&e.cfg, f}
		if f.bool {
			v = boolValue{flagValue{&e.cfg, f}}
		}
		fs.Var(v, f.name, f.usage)
	}
	fs.StringVar(&e.file, "config", "", "YAML `file` whose keys are these flags' names (listen: 127.0.0.1:3307); a flag given on the command line wins")
	return e
}

// Config is the parsed command line over the --config file's keys, validated (without
// listening or reading the TLS files: New does that).
func (e *EndCommand) Config() (Config, error) {
	cfg := e.cfg
	if e.file != "" {
		given := map[string]bool{}
		e.fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		data, err := os.ReadFile(e.file)
		if err != nil {
			return cfg, configErr("--config: %v", err)
		}
		if err := applyConfigFile(&cfg, data, given); err != nil {
			return cfg, fmt.Errorf("%w (--config %s)", err, e.file)
		}
	}
	if cfg.Listen == "" || cfg.To == "" {
		return cfg, configErr("--listen and --to are required")
	}
	return cfg, cfg.Validate()
}

// ErrConfigFile marks a --config file that is not a mapping of end flags to values.
var ErrConfigFile = errors.New("bad --config file")

// applyConfigFile sets in c every key of the YAML mapping data whose flag is not in given.
// A key that is no end flag, a value that is not one scalar or does not parse, and a key
// given twice are refused, naming the key and the accepted form.
func applyConfigFile(c *Config, data []byte, given map[string]bool) error {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%w: %w: %v", ErrConfig, ErrConfigFile, err)
	}
	if len(doc.Content) == 0 {
		return nil // an empty file sets nothing
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fileErr(root, "want a mapping of flag names to values, like `listen: 127.0.0.1:3307`")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		f := lookupFlag(k.Value)
		switch {
		case k.Kind != yaml.ScalarNode || f == nil:
			return fileErr(k, "unknown key %q: want one of %s", k.Value, flagNames())
		case seen[f.name]:
			return fileErr(k, "key %q given twice", f.name)
		case v.Kind != yaml.ScalarNode:
			return fileErr(v, "key %q: want one value, as --%s takes it", f.name, f.name)
		}
		seen[f.name] = true
		if given[f.name] {
			continue
		}
		if err := f.set(c, v.Value); err != nil {
			return fileErr(v, "key %q: %v", f.name, strings.TrimPrefix(err.Error(), ErrConfig.Error()+": "))
		}
	}
	return nil
}

func fileErr(n *yaml.Node, format string, a ...any) error {
	return fmt.Errorf("%w: %w: line %d: %s", ErrConfig, ErrConfigFile, n.Line, fmt.Sprintf(format, a...))
}

// flagNames lists the keys a config file may have.
func flagNames() string {
	names := make([]string, len(endFlags))
	for i, f := range endFlags {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}
