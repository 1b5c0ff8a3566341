package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/viper"
)

// Config keys shared by several commands. Flags win over environment
// (RDMACTL_DEVICE, …), which wins over the config file.
const (
	KeyDevice   = "device"    // RDMA device name, e.g. rxe0
	KeyIBPort   = "ib_port"   // IB port number
	KeyGIDIndex = "gid_index" // GID index for demo ("auto" allowed)
	KeyCMPort   = "cm_port"   // rdma_cm port for ping
	KeyTCPPort  = "tcp_port"  // TCP port for demo
)

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
