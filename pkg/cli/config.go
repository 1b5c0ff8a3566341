package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/viper"
)

// Config keys shared by several commands. Flags win over environment
// (RDMACTL_DEVICE, …), which wins over the config file.
const (
	KeyDevice   = "device"    // RDMA device name, e.g. rxe0
	KeyIBPort   = "ib_port"   // IB port number
	KeyGIDIndex = "gid_index" // GID index for demo ("auto" allowed)
	KeyTCPPort  = "tcp_port"  // TCP port for demo
)

// KnownKeys are the configuration keys rdmactl reads; any other key in a
// config file is warned about (a typo would otherwise go unnoticed).
var KnownKeys = []string{KeyDevice, KeyIBPort, KeyGIDIndex, KeyTCPPort}

// UnknownKeys lists the keys of the loaded config file that rdmactl does
// not read.
func UnknownKeys(v *viper.Viper) []string {
	var out []string
	for _, k := range v.AllKeys() {
		if !slices.Contains(KnownKeys, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// EnvVar is the environment variable that sets key.
func EnvVar(key string) string { return "RDMACTL_" + strings.ToUpper(key) }

// checkDefault validates a default taken from the environment or the
// config file, so that a bad value is reported against where it came from
// rather than as a flag the user never gave. Values from flags are checked
// by the commands.
func checkDefault(key, value string) error {
	number := func(lo, hi int) bool {
		n, err := strconv.Atoi(strings.TrimSpace(value))
		return err == nil && n >= lo && n <= hi
	}
	switch key {
	case KeyIBPort:
		if !number(1, 255) {
			return errors.New("want a port number from 1 to 255")
		}
	case KeyGIDIndex:
		if value != "auto" && !number(0, 255) {
			return errors.New("want a GID index from 0 to 255 (see 'rdmactl gids') or auto")
		}
	case KeyTCPPort:
		if !number(1, 65535) {
			return errors.New("want a port from 1 to 65535")
		}
	case KeyDevice:
		if strings.TrimSpace(value) == "" || strings.ContainsAny(value, "/ \t") {
			return errors.New("want an RDMA device name (see 'rdmactl devices')")
		}
	}
	return nil
}

// defaultSource names where a key's value comes from when no flag set it:
// the environment variable or the config file's key; "" for neither.
func defaultSource(v *viper.Viper, key string) (source, value string) {
	if val, ok := os.LookupEnv(EnvVar(key)); ok && val != "" {
		return EnvVar(key), val
	}
	if v.InConfig(key) {
		return fmt.Sprintf("%s:%s", v.ConfigFileUsed(), key), v.GetString(key)
	}
	return "", ""
}

// LoadConfig builds the layered configuration. explicit is the --config
// value: when given, the file must exist. Otherwise the first of
// $XDG_CONFIG_HOME/rdmactl/config.yaml (or ~/.config/...) and
// /etc/rdmactl/config.yaml that exists is read.
func LoadConfig(explicit string) (*viper.Viper, error) {
	v := viper.New()
	v.SetEnvPrefix("RDMACTL")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()

	path := explicit
	if path == "" {
		path = findConfigFile()
	} else if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, Usagef("config file %s does not exist", path)
		}
		return nil, Usagef("config file %s: %v", path, err)
	}
	if path != "" {
		v.SetConfigFile(path)
		v.SetConfigType("yaml")
		if err := v.ReadInConfig(); err != nil {
			return nil, Usagef("config file %s: %v", path, err)
		}
	}
	return v, nil
}

func findConfigFile() string {
	var candidates []string
	if xdg := os.Getenv("XDG_CONFIG_HOME"); xdg != "" {
		candidates = append(candidates, filepath.Join(xdg, "rdmactl", "config.yaml"))
	} else if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".config", "rdmactl", "config.yaml"))
	}
	candidates = append(candidates, "/etc/rdmactl/config.yaml")
	for _, c := range candidates {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return ""
}
