package doctor

import (
	"path"
	"strings"
)

// ParseProcModules returns the names of the modules listed in /proc/modules.
func ParseProcModules(text string) map[string]bool {
	loaded := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if name, _, ok := strings.Cut(line, " "); ok && name != "" {
			loaded[name] = true
		}
	}
	return loaded
}

// ParseModuleIndex returns the module names in a modules.dep or
// modules.builtin file: one module path per line, "path: deps" in
// modules.dep. Names use '_' as the kernel does ("nvme-rdma.ko" is nvme_rdma).
func ParseModuleIndex(text string) map[string]bool {
	names := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		p, _, _ := strings.Cut(line, ":")
		if p = strings.TrimSpace(p); p != "" {
			names[moduleName(p)] = true
		}
	}
	return names
}

// moduleName turns "kernel/drivers/infiniband/sw/rxe/rdma_rxe.ko.xz" into "rdma_rxe".
func moduleName(p string) string {
	base := path.Base(p)
	if i := strings.Index(base, ".ko"); i >= 0 {
		base = base[:i]
	}
	return strings.ReplaceAll(base, "-", "_")
}
