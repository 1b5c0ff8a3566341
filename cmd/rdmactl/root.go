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
		SilenceUsage:  true,
		SilenceErrors: true,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("unknown command %q (see 'rdmactl --help')", args[0])
			}
			return nil
		},
		RunE: helpOrUsage(f),
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if noColor {
				f.IO.DisableColor()
			}
			return f.Prepare(cmd)
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
		newCmdStat(f, nil),
		newCmdCM(f, nil),
	)
	cmd.InitDefaultCompletionCmd()
	setVersionFlag(cmd)
	requireSubcommands(cmd, f)
	registerCompletions(cmd, f)
	return cmd
}

// requireSubcommands makes every command group (rxe, completion…) reject
// an unknown subcommand as a usage error; cobra would print the help and
// exit 0, which a script reads as success.
func requireSubcommands(root *cobra.Command, f *cli.Factory) {
	for _, c := range root.Commands() {
		requireSubcommands(c, f)
		if !c.HasSubCommands() || c.Runnable() {
			continue
		}
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return cli.Usagef("unknown command %q for %q (see '%s --help')", args[0], cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		}
		c.RunE = helpOrUsage(f)
	}
}

// helpOrUsage runs a command group given no subcommand: the help, unless
// JSON was asked for, which help cannot answer (exit 0 with text would
// read as success to a script).
func helpOrUsage(f *cli.Factory) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if f.JSON {
			return cli.Usagef("%s needs a command (see '%s --help')", cmd.CommandPath(), cmd.CommandPath())
		}
		return cmd.Help()
	}
}
