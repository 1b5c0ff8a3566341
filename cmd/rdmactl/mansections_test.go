package main

// What the man pages say beyond cobra's NAME, SYNOPSIS, DESCRIPTION,
// OPTIONS and EXAMPLE: exit statuses (emulated commands keep their
// tool's), the environment and files that change behaviour, examples for
// commands without any, and the original tools in SEE ALSO.

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/pollwait"
)

// item is one tagged paragraph (.TP) of a section.
type item struct{ tag, text string }

var ownExitStatus = []item{
	{"0", "Success."},
	{"1", "The operation failed; one line on standard error names the problem and the fix."},
	{"2", "Usage error: a bad flag, argument, environment variable or config value."},
}

// exitStatus per command path; commands not listed use ownExitStatus.
var exitStatus = map[string][]item{
	"rdmactl devinfo": {
		{"0", "Success."},
		{"1", "A device could not be opened, or -i is not a positive number (ibv_devinfo prints its usage)."},
		{"2", "A device's attributes could not be queried."},
		{"4", "The port given with -i does not exist on the device."},
		{"255", "No RDMA device was found, the device named with -d does not exist, the device list or a GID could not be read, or an option is unknown."},
		{"", "A failed port query exits with the errno of that query. These are ibv_devinfo's codes; with --json rdmactl's own apply (0, 1 failure, 2 usage)."},
	},
	"rdmactl devices": {
		{"0", "Success, also when there is no device (the table is empty, as with ibv_devices)."},
		{"1", "The device list could not be read."},
	},
	"rdmactl ping": {
		{"0", "Every ping completed (the server: the client disconnected cleanly)."},
		{"22", "EINVAL: an invalid or unknown option (size, count, address), as rping."},
		{"255", "An rdma_cm error event: address or route resolution failed, the peer was unreachable, rejected the connection, or the device was removed (rping's exit(-1))."},
		{"1", "--timeout expired (resolution, connection or one ping took longer)."},
		{"", "An address that cannot be resolved exits with getaddrinfo's negative error (253 for EAI_AGAIN, 254 for EAI_NONAME); any other failure with the errno of the failing call, as rping does."},
	},
	"rdmactl demo": {
		{"0", "The SEND, RDMA READ and RDMA WRITE exchange completed."},
		{"1", "The exchange failed (TCP connection, QP transition, a completion error or --timeout); a hint line names the likely cause."},
		{"2", "Usage error: a bad flag, a device without that port, a GID index that is not populated."},
	},
	"rdmactl doctor": {
		{"0", "No check failed (warnings allowed)."},
		{"1", "At least one check failed; its line names the fix."},
		{"2", "Usage error."},
	},
}

type envVar struct{ name, text string }

// otherEnvironment lists, by command path, the variables a command reads
// besides the RDMACTL_* defaults of its flags (which the page takes from
// the keys the command binds, cli.ReadsConfig).
var otherEnvironment = map[string][]envVar{
	"rdmactl ping": {
		{pollwait.TraceEnv, "When set to a FILE, every completion wait is appended to it (site, latency, time spun), for studying the wait policy."},
		{"GOGC, GOMEMLIMIT", "Win over the collector settings a persistent server (-s -P) applies (GOGC 50, a 16 MiB soft limit)."},
	},
	"rdmactl serve": {
		{"GOGC, GOMEMLIMIT", "Win over the collector settings the responder applies (GOGC 50, a 16 MiB soft limit)."},
	},
}

// configEnvironment describes the RDMACTL_* variables that give c's flags
// their defaults, from the config keys c binds.
func configEnvironment(c *cobra.Command) []envVar {
	keys := cli.ConfigFlags(c)
	var out []envVar
	for _, key := range cli.KnownKeys {
		name, ok := keys[key]
		if !ok {
			continue
		}
		fl := c.Flags().Lookup(name)
		flag := "--" + fl.Name
		if fl.Shorthand != "" {
			flag = "-" + fl.Shorthand + " (" + flag + ")"
		}
		out = append(out, envVar{cli.EnvVar(key), fmt.Sprintf("Default for %s, over the config file's key %s; the flag wins.", flag, key)})
	}
	return out
}

var commonEnvironment = []envVar{
	{"NO_COLOR", "When set (to anything), never colour the output; emulated output is never coloured."},
	{"XDG_CONFIG_HOME", "Where the per-user config file is looked for (default ~/.config)."},
}

var configFiles = []item{
	{"$XDG_CONFIG_HOME/rdmactl/config.yaml", "Per-user configuration (keys " + strings.Join(cli.KnownKeys, ", ") + ", read by the commands whose ENVIRONMENT names their RDMACTL_* variables); flags win over RDMACTL_* variables, which win over the file."},
	{"/etc/rdmactl/config.yaml", "System-wide configuration, read when there is no per-user file."},
}

var rxeFiles = []item{
	{"/etc/rdmactl/rxe.conf", "The Soft-RoCE links recorded by rxe add --persist, one 'NAME NETDEV' a line; rxe apply and the rdmactl-rxe.service unit re-create them at boot."},
	{"/sys/class/infiniband", "The RDMA devices, their ports and GID tables."},
}

// examples for commands that have no cobra Example.
var examples = map[string]string{
	"rdmactl":            "  rdmactl rxe add eth0          # Soft-RoCE on eth0\n  rdmactl devinfo -v            # as ibv_devinfo -v\n  rdmactl doctor                # what is wrong, and the fix",
	"rdmactl devices":    "  rdmactl devices\n  rdmactl devices --json",
	"rdmactl rxe":        "  rdmactl rxe add eth0 --persist\n  rdmactl rxe status\n  rdmactl rxe remove rxe_eth0 --persist",
	"rdmactl rxe remove": "  rdmactl rxe remove rxe_eth0\n  rdmactl rxe remove eth0 --persist   # by netdev, and forget it",
	"rdmactl rxe status": "  rdmactl rxe status\n  rdmactl rxe status --json",
	"rdmactl completion": "  rdmactl completion bash >/etc/bash_completion.d/rdmactl",
	"rdmactl version":    "  rdmactl version",
	"rdmactl gids":       "  rdmactl gids\n  rdmactl gids -d rxe0 --ip 10.9.0.1   # the index for demo -g",
	"rdmactl doctor":     "  rdmactl doctor\n  rdmactl doctor --ip 10.9.0.2\n  rdmactl doctor --facts >facts.json",
	"rdmactl rxe apply":  "  rdmactl rxe apply\n  systemctl enable rdmactl-rxe.service",
	"rdmactl rxe add":    "  rdmactl rxe add eth0\n  rdmactl rxe add eth0 --name rxe0 --persist",
}

// seeAlso names the original tools a command stands in for.
var seeAlso = map[string][]string{
	"rdmactl":         {"rping(1)", "ibv_devinfo(1)", "ibv_devices(1)", "rdma(8)"},
	"rdmactl ping":    {"rping(1)", "rdma_cm(7)"},
	"rdmactl devinfo": {"ibv_devinfo(1)"},
	"rdmactl devices": {"ibv_devices(1)"},
	"rdmactl gids":    {"ibv_devinfo(1)", "rdma(8)"},
	"rdmactl demo":    {"ibv_rc_pingpong(1)", "rdma(8)"},
	"rdmactl rxe":     {"rdma(8)", "rdma-link(8)", "systemctl(1)"},
	"rdmactl doctor":  {"rdma(8)", "iptables(8)"},
}

// addManSections inserts EXIT STATUS, ENVIRONMENT, FILES and missing
// EXAMPLES before cobra's SEE ALSO and adds the original tools to it.
func addManSections(c *cobra.Command, page string) string {
	path := c.CommandPath()
	var b strings.Builder
	b.WriteString(".SH EXIT STATUS\n")
	st, ok := exitStatus[path]
	if !ok {
		st = ownExitStatus
	}
	writeItems(&b, st)

	b.WriteString("\n.SH ENVIRONMENT\n")
	env := append(configEnvironment(c), otherEnvironment[path]...)
	for _, e := range append(env, commonEnvironment...) {
		fmt.Fprintf(&b, ".TP\n\\fB%s\\fP\n%s\n", e.name, e.text)
	}

	b.WriteString("\n.SH FILES\n")
	files := configFiles
	if path == "rdmactl" || strings.HasPrefix(path, "rdmactl rxe") {
		files = append(append([]item{}, configFiles...), rxeFiles...)
	}
	writeItems(&b, files)

	// cobra's EXAMPLE moves after FILES, as man-pages(7) orders them.
	page, cobraExamples := cutSection(page, ".SH EXAMPLE\n")
	switch ex, ok := examples[path]; {
	case cobraExamples != "":
		b.WriteString("\n.SH EXAMPLES\n" + strings.TrimSpace(cobraExamples) + "\n")
	case ok:
		fmt.Fprintf(&b, "\n.SH EXAMPLES\n.EX\n%s\n.EE\n", ex)
	}
	b.WriteString("\n\n")

	i := strings.Index(page, ".SH SEE ALSO\n")
	if i < 0 {
		page += "\n.SH SEE ALSO\n"
		i = strings.Index(page, ".SH SEE ALSO\n")
	}
	page = page[:i] + b.String() + page[i:]
	refs := seeAlso[path]
	if len(refs) == 0 {
		refs = seeAlso[parentPath(path)]
	}
	var extra []string
	for _, r := range refs {
		name, sec, _ := strings.Cut(strings.TrimSuffix(r, ")"), "(")
		extra = append(extra, fmt.Sprintf("\\fB%s\\fP(%s)", name, sec))
	}
	if len(extra) > 0 {
		page = strings.TrimRight(page, "\n")
		if !strings.HasSuffix(page, ".SH SEE ALSO") {
			page += ", "
		} else {
			page += "\n"
		}
		page += strings.Join(extra, ", ") + "\n"
	}
	return page
}

// cutSection removes the section that starts with heading and returns the
// page without it and the section's body.
func cutSection(page, heading string) (rest, body string) {
	i := strings.Index(page, heading)
	if i < 0 {
		return page, ""
	}
	after := page[i+len(heading):]
	end := strings.Index(after, "\n.SH ")
	if end < 0 {
		end = len(after)
	}
	return page[:i] + after[end+1:], after[:end]
}

func parentPath(path string) string {
	if i := strings.LastIndexByte(path, ' '); i > 0 {
		return path[:i]
	}
	return ""
}

func writeItems(b *strings.Builder, items []item) {
	for _, it := range items {
		if it.tag == "" {
			fmt.Fprintf(b, ".PP\n%s\n", it.text)
			continue
		}
		fmt.Fprintf(b, ".TP\n\\fB%s\\fP\n%s\n", it.tag, it.text)
	}
}
