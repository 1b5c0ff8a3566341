package cli

import (
	"fmt"
	"strings"
)

// UnknownDevice is every command's error for a device name that names no
// RDMA device: the name, where it came from (source: "-d",
// "RDMACTL_DEVICE", "FILE:device"; "" when the user did not give it) and
// the names there are to choose from. A name the user gave is a usage
// error (exit 2).
func UnknownDevice(name, source string, devices []string) error {
	from := ""
	if source != "" {
		from = " (from " + source + ")"
	}
	there := "libibverbs lists none (run 'rdmactl doctor' to see why)"
	if len(devices) > 0 {
		there = "the devices are " + strings.Join(devices, ", ")
	}
	msg := fmt.Sprintf("no RDMA device %q%s: %s", name, from, there)
	if source == "" {
		return Failf("%s", msg)
	}
	return Usagef("%s", msg)
}
