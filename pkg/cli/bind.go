package cli

import (
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// configAnnotation is the cobra annotation in which a command declares the
// config keys it takes defaults from, as "key=flag" pairs. Binding reads
// it, and so do the man pages' ENVIRONMENT sections: what a page says a
// command reads is what the command binds.
const configAnnotation = "rdmactl.config"

// ReadsConfig declares that cmd takes the defaults of the flags in
// keyToFlag from those config keys (and their RDMACTL_* variables).
func ReadsConfig(cmd *cobra.Command, keyToFlag map[string]string) {
	var pairs []string
	for key, flag := range keyToFlag {
		pairs = append(pairs, key+"="+flag)
	}
	slices.Sort(pairs)
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[configAnnotation] = strings.Join(pairs, " ")
}

// ConfigFlags returns the config keys cmd declared with ReadsConfig, each
// with its flag's name.
func ConfigFlags(cmd *cobra.Command) map[string]string {
	out := map[string]string{}
	for _, pair := range strings.Fields(cmd.Annotations[configAnnotation]) {
		key, flag, _ := strings.Cut(pair, "=")
		out[key] = flag
	}
	return out
}

// BindCommand binds the config keys cmd declared to its flags (see
// BindFlags); the root command does it for the command that runs, before
// it runs.
func (f *Factory) BindCommand(cmd *cobra.Command) error {
	keys := ConfigFlags(cmd)
	if len(keys) == 0 {
		return nil
	}
	_, err := f.BindFlags(cmd.Flags(), keys)
	return err
}

// Prepare is what the root command does before any command runs: load the
// config (a broken or missing file is reported by every command, not only
// by those that read a key from it) and bind the keys cmd declared.
func (f *Factory) Prepare(cmd *cobra.Command) error {
	if _, err := f.Config(); err != nil {
		return err
	}
	return f.BindCommand(cmd)
}

// ValueSource names where cmd's value for key came from, as an error
// message should cite it: the flag as its short form (-d) when it was
// given, else the RDMACTL_* variable or the config file's FILE:key; ""
// for the flag's default.
func (f *Factory) ValueSource(cmd *cobra.Command, key string) string {
	if name, ok := ConfigFlags(cmd)[key]; ok {
		if fl := cmd.Flags().Lookup(name); fl != nil && !fl.Changed {
			v, err := f.Config()
			if err != nil {
				return ""
			}
			source, _ := defaultSource(v, key)
			return source
		}
	}
	return flagSource(cmd, ConfigFlags(cmd)[key])
}

// flagSource names flag name as a message should cite it: its short form
// (-d) when it has one, else --name; "" when the flag was not given.
func flagSource(cmd *cobra.Command, name string) string {
	fl := cmd.Flags().Lookup(name)
	switch {
	case fl == nil || !fl.Changed:
		return ""
	case fl.Shorthand != "":
		return "-" + fl.Shorthand
	}
	return "--" + fl.Name
}
