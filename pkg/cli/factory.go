package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/rdmactl/rdmactl/pkg/host"
	"github.com/rdmactl/rdmactl/pkg/rdma"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Factory is what the root command hands every subcommand: the streams,
// the global flags and lazy access to configuration.
type Factory struct {
	IO      *IOStreams
	Version string

	// ConfigPath is the --config value; JSON is the global --json flag.
	ConfigPath string
	JSON       bool

	// RDMA returns the RDMA stack; cmd/rdmactl wires pkg/cgoverbs, tests
	// a fake. Commands copy it into their options.
	RDMA func() rdma.Stack
	// Host returns the machine (netlink, sysfs, modules) for rxe and
	// doctor; cmd/rdmactl wires host.System, tests a fake.
	Host func() host.Host
	// Interrupted returns a context that SIGINT or SIGTERM cancels, for the
	// commands that end cleanly on them (serve, smoke, stat, ping with
	// --stats or --json); the others keep the signals' default effect, as
	// the C tools do. Tests give a context they cancel themselves.
	Interrupted func() (context.Context, context.CancelFunc)

	config *viper.Viper
}

// Config loads the layered configuration once.
func (f *Factory) Config() (*viper.Viper, error) {
	if f.config != nil {
		return f.config, nil
	}
	v, err := LoadConfig(f.ConfigPath)
	if err != nil {
		return nil, err
	}
	if unknown := UnknownKeys(v); len(unknown) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "rdmactl: warning: %s: unknown key %s ignored (known: %s)\n",
			v.ConfigFileUsed(), strings.Join(quoteAll(unknown), ", "), strings.Join(KnownKeys, ", "))
	}
	f.config = v
	return v, nil
}

func quoteAll(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = strconv.Quote(k)
	}
	return out
}

// BindFlags ties config keys to flags so that an explicit flag wins over
// RDMACTL_* variables, which win over the config file, which wins over the
// flag's default. It returns the loaded configuration.
func (f *Factory) BindFlags(flags *pflag.FlagSet, keyToFlag map[string]string) (*viper.Viper, error) {
	v, err := f.Config()
	if err != nil {
		return nil, err
	}
	for key, name := range keyToFlag {
		fl := flags.Lookup(name)
		if fl == nil {
			continue
		}
		if !fl.Changed {
			if source, value := defaultSource(v, key); source != "" {
				if err := checkDefault(key, value); err != nil {
					return nil, Usagef("invalid %s %q (the default for --%s): %v", source, value, name, err)
				}
			}
		}
		if err := v.BindPFlag(key, fl); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// NotifyInterrupt is the Factory's Interrupted outside tests.
func NotifyInterrupt() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}
