package main

import (
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// Placeholder until the gids command lands.
func newCmdGids(f *cli.Factory, runF func() error) *cobra.Command {
	return &cobra.Command{Use: "gids", Short: "not implemented yet", RunE: func(*cobra.Command, []string) error {
		return cli.Failf("gids: not implemented yet")
	}}
}
