package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// newCmdMan writes the man pages from the command tree (make man); hidden
// because users read the pages, they do not make them.
func newCmdMan() *cobra.Command {
	return &cobra.Command{
		Use:    "gen-man DIR",
		Short:  "Write man pages for every command into DIR",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			root.DisableAutoGenTag = true
			header := &doc.GenManHeader{Title: "RDMACTL", Section: "1", Source: "rdmactl"}
			return doc.GenManTree(root, header, args[0])
		},
	}
}
