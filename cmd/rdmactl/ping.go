package main

import (
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// Placeholder until the ping command lands.
func newCmdPing(f *cli.Factory, runF func() error) *cobra.Command {
	return &cobra.Command{Use: "ping", Short: "not implemented yet", RunE: func(*cobra.Command, []string) error {
		return cli.Failf("ping: not implemented yet")
	}}
}
