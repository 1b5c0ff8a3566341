//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// stuckReport says what each thread of process group pgid is doing: its
// state, the kernel function it sleeps in and the system call it is in.
// Taken just before a command is killed at its time limit, it tells a
// wait for a peer (read on a socket) from a spin (running) from a stall
// in the kernel, which the command's own output often cannot: perftest's
// stdout on a pipe is buffered and lost with the kill.
func stuckReport(pgid int) string {
	var b strings.Builder
	for _, p := range groupProcs(pgid) {
		tasks, _ := filepath.Glob(p.dir + "/task/[0-9]*")
		if len(tasks) == 0 { // it has exited, not yet collected
			fmt.Fprintf(&b, "%s %s state %s\n", filepath.Base(p.dir), procComm(p.stat), procState(p.stat))
		}
		for _, task := range tasks {
			stat, _ := os.ReadFile(task + "/stat")
			wchan, _ := os.ReadFile(task + "/wchan")
			call, _ := os.ReadFile(task + "/syscall")
			fmt.Fprintf(&b, "%s/%s %s state %s wchan %s syscall %s\n", filepath.Base(p.dir), filepath.Base(task),
				procComm(stat), procState(stat), orDash(string(wchan)), syscallName(string(call)))
		}
	}
	if b.Len() == 0 {
		return "(no process left in its group: it had exited)\n"
	}
	return b.String()
}

// groupProc is a process of a group: its /proc directory and stat line.
type groupProc struct {
	dir  string
	stat []byte
}

// groupProcs lists the processes of group pgid.
func groupProcs(pgid int) []groupProc {
	var procs []groupProc
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, dir := range dirs {
		if stat, err := os.ReadFile(dir + "/stat"); err == nil && procGroup(stat) == pgid {
			procs = append(procs, groupProc{dir, stat})
		}
	}
	return procs
}

// The fields of /proc/pid/stat after the command name in parentheses
// (which may hold spaces): state, ppid, pgrp.
func statFields(stat []byte) []string {
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		return strings.Fields(s[i+1:])
	}
	return nil
}

func procGroup(stat []byte) int {
	if f := statFields(stat); len(f) >= 3 {
		n, _ := strconv.Atoi(f[2])
		return n
	}
	return -1
}

func procState(stat []byte) string {
	if f := statFields(stat); len(f) >= 1 {
		return f[0]
	}
	return "-"
}

func procComm(stat []byte) string {
	s := string(stat)
	i, j := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if i < 0 || j < i {
		return "-"
	}
	return s[i+1 : j]
}

func orDash(s string) string {
	if s = strings.TrimSpace(s); s == "" || s == "0" {
		return "-"
	}
	return s
}

// syscallNames are the calls a stuck test command is likely to sit in
// (x86-64 numbers; others print as numbers).
var syscallNames = map[string]string{
	"0": "read", "1": "write", "7": "poll", "16": "ioctl", "23": "select", "35": "nanosleep",
	"42": "connect", "43": "accept", "45": "recvfrom", "61": "wait4", "202": "futex",
	"230": "clock_nanosleep", "232": "epoll_wait", "270": "pselect6", "271": "ppoll",
	"281": "epoll_pwait", "288": "accept4",
}

// syscallName reads /proc/.../syscall: "running", or the number of the
// call the thread blocks in and its arguments.
func syscallName(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return "-"
	}
	if name, ok := syscallNames[f[0]]; ok {
		return name
	}
	return f[0]
}

// interruptGoProcesses asks the rdmactl processes of group pgid for their
// goroutine stacks (SIGQUIT: the Go runtime prints them on stderr and
// exits) and gives them a moment to write them before the kill.
func interruptGoProcesses(pgid int) {
	sent := false
	for _, p := range groupProcs(pgid) {
		if exe, _ := os.Readlink(p.dir + "/exe"); exe != "" && filepath.Base(exe) == filepath.Base(rdmactl) {
			pid, _ := strconv.Atoi(filepath.Base(p.dir))
			sent = syscall.Kill(pid, syscall.SIGQUIT) == nil || sent
		}
	}
	if sent {
		time.Sleep(2 * time.Second)
	}
}
