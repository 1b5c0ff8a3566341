package main

import (
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// Placeholder until the rxe command lands.
func newCmdRxe(f *cli.Factory) *cobra.Command {
	return &cobra.Command{Use: "rxe", Short: "not implemented yet", RunE: func(*cobra.Command, []string) error {
		return cli.Failf("rxe: not implemented yet")
	}}
}
