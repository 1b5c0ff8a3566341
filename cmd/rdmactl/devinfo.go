package main

import (
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// Placeholder until the devinfo command lands.
func newCmdDevinfo(f *cli.Factory, runF func() error) *cobra.Command {
	return &cobra.Command{Use: "devinfo", Short: "not implemented yet", RunE: func(*cobra.Command, []string) error {
		return cli.Failf("devinfo: not implemented yet")
	}}
}
