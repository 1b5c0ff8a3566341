package main

import (
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// Placeholder until the devices command lands.
func newCmdDevices(f *cli.Factory, runF func() error) *cobra.Command {
	return &cobra.Command{Use: "devices", Short: "not implemented yet", RunE: func(*cobra.Command, []string) error {
		return cli.Failf("devices: not implemented yet")
	}}
}
