package main

import (
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

// wantArgs is cobra.ExactArgs with a usage error (exit 2) that names
// what is expected.
func wantArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) == n {
			return nil
		}
		if n == 0 {
			return cli.Usagef("%s takes no arguments (see '%s --help')", cmd.CommandPath(), cmd.CommandPath())
		}
		return cli.Usagef("%s needs %s (see '%s --help')", cmd.CommandPath(), what, cmd.CommandPath())
	}
}
