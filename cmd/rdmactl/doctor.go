package main

import (
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// Placeholder until the doctor command lands.
func newCmdDoctor(f *cli.Factory, runF func() error) *cobra.Command {
	return &cobra.Command{Use: "doctor", Short: "not implemented yet", RunE: func(*cobra.Command, []string) error {
		return cli.Failf("doctor: not implemented yet")
	}}
}
