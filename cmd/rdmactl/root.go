package main

import (
	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
)

func newCmdRoot(f *cli.Factory) *cobra.Command {
	var noColor bool
	cmd := &cobra.Command{
		Use:           "rdmactl",
		Short:         "Bring up, inspect and test RDMA devices",
		Long:          "rdmactl replaces rping, ibv_devinfo, ibv_devices, show_gids, rxe_cfg and the RC verbs demo with one tool.",
		Version:       f.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("unknown command %q (see 'rdmactl --help')", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if noColor {
				f.IO.DisableColor()
			}
			// A broken or missing config file is reported by every command,
			// not only by those that read a key from it.
			_, err := f.Config()
			return err
		},
	}
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return cli.Usagef("%v (see '%s --help')", err, c.CommandPath())
	})

	pf := cmd.PersistentFlags()
	pf.StringVar(&f.ConfigPath, "config", "", "config file (default $XDG_CONFIG_HOME/rdmactl/config.yaml, then /etc/rdmactl/config.yaml)")
	pf.BoolVarP(&f.JSON, "json", "j", false, "print one JSON document on stdout (docs/json.md), also on failure")
	pf.BoolVar(&cli.PrettyJSON, "pretty", false, "indent JSON output (compact by default)")
	pf.BoolVar(&noColor, "no-color", false, "never colour the output (NO_COLOR is honoured too)")

	cmd.AddCommand(
		newCmdDevinfo(f, nil),
		newCmdDevices(f, nil),
		newCmdGids(f, nil),
		newCmdPing(f, nil),
		newCmdDemo(f, nil),
		newCmdPerf(f, nil),
		newCmdPingpong(f, nil),
		newCmdRxe(f),
		newCmdDoctor(f, nil),
		newCmdVersion(f),
		newCmdServe(f, nil),
		newCmdSmoke(f, nil),
		newCmdCM(f, nil),
	)
	cmd.InitDefaultCompletionCmd()
	requireSubcommands(cmd)
	registerCompletions(cmd, f)
	return cmd
}

// requireSubcommands makes every command group (rxe, completion…) reject
// an unknown subcommand as a usage error; cobra would print the help and
// exit 0, which a script reads as success.
func requireSubcommands(root *cobra.Command) {
	for _, c := range root.Commands() {
		requireSubcommands(c)
		if !c.HasSubCommands() || c.Runnable() {
			continue
		}
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("unknown command %q for %q (see '%s --help')", args[0], cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		}
		c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
	}
}
