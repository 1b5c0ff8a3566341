package main

import (
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// Placeholder until the demo command lands.
func newCmdDemo(f *cli.Factory, runF func() error) *cobra.Command {
	return &cobra.Command{Use: "demo", Short: "not implemented yet", RunE: func(*cobra.Command, []string) error {
		return cli.Failf("demo: not implemented yet")
	}}
}
