package perf

import (
	"errors"
	"fmt"
	"io"
	"syscall"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/counters"
	"github.com/rdmactl/rdmactl/pkg/rdma"
)

// Result is the --json document: the settings both sides agreed on, every
// number perftest prints, and the CPU time this process spent per
// iteration.
type Result struct {
	Test      string      `json:"test"`
	Role      string      `json:"role"`
	Device    string      `json:"device"`
	IBPort    int         `json:"port"`
	GIDIndex  int         `json:"gid_index"`
	MTU       int         `json:"path_mtu"`
	Conn      string      `json:"connection"` // -c: RC, UC or UD
	QPs       int         `json:"qps"`
	TxDepth   int         `json:"tx_depth"`
	RxDepth   int         `json:"rx_depth,omitempty"`
	CQMod     int         `json:"cq_moderation,omitempty"`
	OutReads  int         `json:"outstanding_reads,omitempty"`
	BusyPoll  bool        `json:"busy_poll"`
	Local     JSONDest    `json:"local"` // QP 0's, as perftest prints first
	Remote    JSONDest    `json:"remote"`
	QPPairs   []QPPair    `json:"qp_pairs"` // every QP's, in order (-q)
	BWUnit    string      `json:"bw_unit,omitempty"`
	Bandwidth []BWRow     `json:"bandwidth,omitempty"`
	Latency   []LatReport `json:"latency,omitempty"`
	// LatencyDuration is a latency test's result with -D.
	LatencyDuration []LatDurReport `json:"latency_duration,omitempty"`
	CPU             CPUUse         `json:"cpu"`
	// ReportCounters are -W's counters' changes, per result row.
	ReportCounters []CounterChange `json:"report_counters,omitempty"`
	// PortCounters are the error counters that rose during the run.
	PortCounters *counters.Summary `json:"port_counters,omitempty"`
	OK           bool              `json:"ok"` // the document is written only when the test ran
	sess         *session
}

// JSONDest is a QP record as JSON.
type JSONDest struct {
	LID   uint16 `json:"lid"`
	QPN   uint32 `json:"qp_num"`
	PSN   uint32 `json:"psn"`
	RKey  uint32 `json:"rkey"`
	VAddr string `json:"addr"` // hex, as demo's records
	GID   string `json:"gid,omitempty"`
}

// QPPair is one QP's records and its peer's.
type QPPair struct {
	Local  JSONDest `json:"local"`
	Remote JSONDest `json:"remote"`
}

// BWRow is one bandwidth line of the table.
type BWRow struct {
	Bytes   uint64  `json:"bytes"`
	Iters   uint64  `json:"iterations"`
	BWPeak  float64 `json:"bw_peak"`
	BWAvg   float64 `json:"bw_average"`
	MsgRate float64 `json:"msg_rate_mpps"`
}

// CPUUse is getrusage's user and system time over the data path.
type CPUUse struct {
	UserSec     float64 `json:"user_sec"`
	SysSec      float64 `json:"sys_sec"`
	Iterations  uint64  `json:"iterations"`
	USecPerIter float64 `json:"usec_per_iteration"`
	// HostUserPercent is --cpu_util's CPU_Util[%] of the last row: the
	// host's user time over its user and idle time in -D's sample window.
	HostUserPercent *float64 `json:"host_user_percent,omitempty"`
}

func newResult(r Resolved) *Result {
	role := "server"
	if r.active() {
		role = "client"
	}
	res := &Result{Test: r.Test.String(), Role: role, IBPort: r.IBPort, Conn: r.Conn.String(), QPs: r.QPs, TxDepth: r.TxDepth, BusyPoll: r.BusyPoll}
	if r.Test.IsSend() {
		res.RxDepth = r.RxDepth
	}
	if !r.Test.Latency() {
		res.CQMod = r.CQMod
		res.BWUnit = "MB/sec"
		if r.Gbits {
			res.BWUnit = "Gb/sec"
		}
	}
	return res
}

func (res *Result) setup(s *session, outReads int) {
	res.sess = s
	res.Device = s.devName
	res.GIDIndex = s.gidIdx
	res.MTU = mtuBytes(s.mtu)
	if s.r.Test.fetches() {
		res.OutReads = outReads
	}
}

func jsonDest(d Dest, withGID bool) JSONDest {
	j := JSONDest{LID: d.LID, QPN: d.QPN, PSN: d.PSN, RKey: d.RKey, VAddr: fmt.Sprintf("0x%x", d.VAddr)}
	if withGID {
		j.GID = rdma.GID(d.GID).String()
	}
	return j
}

func (res *Result) addBW(r BWReport) {
	res.Bandwidth = append(res.Bandwidth, BWRow{Bytes: r.Size, Iters: r.Iters, BWPeak: r.BWPeak, BWAvg: r.BWAvg, MsgRate: r.MsgRate})
}

func (res *Result) addLat(r LatReport) { res.Latency = append(res.Latency, r) }

func (res *Result) addCPU(d cpuTimes, iters uint64) {
	res.CPU.UserSec += d.user.Seconds()
	res.CPU.SysSec += d.sys.Seconds()
	res.CPU.Iterations += iters
	if res.CPU.Iterations > 0 {
		res.CPU.USecPerIter = (res.CPU.UserSec + res.CPU.SysSec) * 1e6 / float64(res.CPU.Iterations)
	}
}

// complete fills in the QP records once the test has run.
func (res *Result) complete() {
	if s := res.sess; s != nil {
		for i := range s.locals {
			res.QPPairs = append(res.QPPairs, QPPair{jsonDest(s.locals[i], s.withGID), jsonDest(s.remotes[i], s.withGID)})
		}
		res.Local, res.Remote = res.QPPairs[0].Local, res.QPPairs[0].Remote
	}
	res.OK = true
}

func (res *Result) write(w io.Writer) error { return cli.WriteJSON(w, res) }

type cpuTimes struct{ user, sys time.Duration }

type cpuMark cpuTimes

func rusage() cpuTimes {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return cpuTimes{time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())}
}

func startCPU() cpuMark { return cpuMark(rusage()) }

func (m cpuMark) since() cpuTimes {
	now := rusage()
	return cpuTimes{now.user - m.user, now.sys - m.sys}
}

// dataErr adds the classic causes to a failure in the data path.
func (s *session) dataErr(err error) error {
	var wc *rdma.WCError
	if errors.As(err, &wc) {
		switch wc.Status {
		case rdma.WCRetryExcErr:
			return cli.WithHint(err, "the peer never acknowledged: check -x on both sides (a GID the peer can reach, same IP version) and, in one kernel, that both use the same rxe device")
		case rdma.WCRemInvReqErr:
			// rxe and the HCAs answer so when the peer's QP was not
			// given the access this operation needs.
			return cli.WithHint(err, "the peer's QP does not take "+opcodeName(s.r.Test)+" requests: run "+s.r.Test.String()+" on the peer too")
		case rdma.WCRemAccessErr:
			return cli.WithHint(err, "the peer refused the access to its memory (key, address or length): run both sides with the same -s/-a")
		case rdma.WCRNRRetryErr:
			return cli.WithHint(err, "the peer had no receive posted when a message came")
		}
	}
	if errors.Is(err, syscall.ETIMEDOUT) {
		return cli.WithHint(err, "the peer stopped answering: check that it still runs and that both use the same -n, -s and MTU")
	}
	return err
}
