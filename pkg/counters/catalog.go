// Package counters turns the port counters pkg/host reads into answers:
// snapshots and their differences, which counters are errors and what a
// rise of each usually means, and the sentence a run's verdict carries
// when one rose. Pure Go.
package counters

import "strings"

// Kind sorts counters by what a rise says about a run.
type Kind int

const (
	// Traffic counts work done (packets, operations): a rise is normal.
	Traffic Kind = iota
	// Retry counts recovery: the transport resent or waited, and the
	// operation may still have succeeded, later.
	Retry
	// Error counts failures: a work request failed or a link dropped.
	Error
)

// Info describes one counter.
type Info struct {
	Kind Kind
	// Meaning is one line on what a rise usually means.
	Meaning string
	// Metric is node_exporter's infiniband collector name for it (without
	// the node_infiniband_ prefix), or "" where it has none.
	Metric string
}

// IsError tells whether a rise of the counter is worth reporting.
func (i Info) IsError() bool { return i.Kind != Traffic }

// catalog covers Soft-RoCE's hw_counters, the common mlx5 ones and the
// InfiniBand port counters of counters/.
var catalog = map[string]Info{
	// rdma_rxe
	"sent_pkts":              {Traffic, "packets sent", "port_packets_transmitted_total"},
	"rcvd_pkts":              {Traffic, "packets received", "port_packets_received_total"},
	"rdma_sends":             {Traffic, "SEND operations sent", ""},
	"rdma_recvs":             {Traffic, "SEND operations received", ""},
	"ack_deferred":           {Traffic, "ACKs the responder deferred", ""},
	"duplicate_request":      {Retry, "the responder got a request again: the peer resent it after a lost or late ACK", "duplicate_requests_packets_total"},
	"out_of_seq_request":     {Retry, "the responder got a request past a gap in the PSNs: packets were lost on the way in", "out_of_sequence_packets_received_total"},
	"rcvd_seq_err":           {Retry, "the peer NAKed a PSN gap: packets we sent were lost, resent from the gap", "packet_sequence_errors_total"},
	"completer_retry_err":    {Retry, "no ACK came in time (ACK timeout): the requester resent; loss on the path", "local_ack_timeout_errors_total"},
	"rcvd_rnr_err":           {Retry, "the peer answered receiver-not-ready: it had no receive posted", "rnr_nak_retry_packets_received_total"},
	"send_rnr_err":           {Retry, "we answered receiver-not-ready: no receive was posted here in time", ""},
	"retry_exceeded_err":     {Error, "a QP gave up after its retry count (IBV_WC_RETRY_EXC_ERR): the peer is unreachable or the path drops", ""},
	"retry_rnr_exceeded_err": {Error, "a QP gave up after its RNR retry count: the peer never posted a receive", ""},
	"send_err":               {Error, "a packet could not be handed to the network device (route or netdev down)", ""},
	"link_downed":            {Error, "the port's link went down", "link_downed_total"},

	// mlx5
	"out_of_buffer":              {Retry, "packets dropped: no receive WQE was posted (RNR)", "out_of_buffer_drops_total"},
	"out_of_sequence":            {Retry, "packets arrived out of sequence: loss on the path", "out_of_sequence_packets_received_total"},
	"packet_seq_err":             {Retry, "NAK sequence errors received: packets we sent were lost", "packet_sequence_errors_total"},
	"implied_nak_seq_err":        {Retry, "a READ response or ACK skipped PSNs: loss on the path", "implied_nak_seq_errors_total"},
	"local_ack_timeout_err":      {Retry, "no ACK came in time (ACK timeout): the requester resent; loss on the path", "local_ack_timeout_errors_total"},
	"rnr_nak_retry_err":          {Retry, "the peer answered receiver-not-ready: it had no receive posted", "rnr_nak_retry_packets_received_total"},
	"roce_adp_retrans":           {Retry, "adaptive retransmissions", "roce_adp_retransmits_total"},
	"roce_adp_retrans_to":        {Retry, "adaptive retransmission timeouts", "roce_adp_retransmits_timeout_total"},
	"req_cqe_error":              {Error, "requester work completions with an error", "req_cqes_errors_total"},
	"resp_cqe_error":             {Error, "responder work completions with an error", "resp_cqes_errors_total"},
	"req_remote_access_errors":   {Error, "the peer refused an RDMA access (rkey, bounds or rights)", "req_remote_access_errors_total"},
	"resp_remote_access_errors":  {Error, "we refused a peer's RDMA access (rkey, bounds or rights)", "resp_remote_access_errors_total"},
	"req_remote_invalid_request": {Error, "the peer found a request invalid (length or opcode)", "req_remote_invalid_request_errors_total"},
	"resp_local_length_error":    {Error, "a received message was longer than the posted receive buffer", "resp_local_length_errors_total"},
	"rx_icrc_encapsulated":       {Error, "RoCE packets with a bad ICRC", "rx_icrc_encapsulated_errors_total"},

	// InfiniBand port counters (counters/)
	"port_xmit_data":                  {Traffic, "data sent, in 4-byte words", "port_data_transmitted_bytes_total"},
	"port_rcv_data":                   {Traffic, "data received, in 4-byte words", "port_data_received_bytes_total"},
	"port_xmit_packets":               {Traffic, "packets sent", "port_packets_transmitted_total"},
	"port_rcv_packets":                {Traffic, "packets received", "port_packets_received_total"},
	"unicast_xmit_packets":            {Traffic, "unicast packets sent", "unicast_packets_transmitted_total"},
	"unicast_rcv_packets":             {Traffic, "unicast packets received", "unicast_packets_received_total"},
	"multicast_xmit_packets":          {Traffic, "multicast packets sent", "multicast_packets_transmitted_total"},
	"multicast_rcv_packets":           {Traffic, "multicast packets received", "multicast_packets_received_total"},
	"port_xmit_wait":                  {Traffic, "ticks with data to send and no credit: congestion", "port_transmit_wait_total"},
	"symbol_error":                    {Error, "minor link errors on a lane: a bad cable or transceiver", "symbol_error_total"},
	"link_error_recovery":             {Error, "the link recovered from an error state", "link_error_recovery_total"},
	"port_rcv_errors":                 {Error, "packets received with errors", "port_errors_received_total"},
	"port_rcv_remote_physical_errors": {Error, "packets received marked bad upstream", "port_receive_remote_physical_errors_total"},
	"port_rcv_switch_relay_errors":    {Error, "packets a switch could not forward", "port_receive_switch_relay_errors_total"},
	"port_xmit_discards":              {Error, "outbound packets discarded: port down or congested", "port_discards_transmitted_total"},
	"port_xmit_constraint_errors":     {Error, "packets not sent for partition or filter reasons", "port_constraint_errors_transmitted_total"},
	"port_rcv_constraint_errors":      {Error, "packets discarded on receipt for partition or filter reasons", "port_constraint_errors_received_total"},
	"local_link_integrity_errors":     {Error, "local physical errors passed their threshold", "local_link_integrity_errors_total"},
	"excessive_buffer_overrun_errors": {Error, "receive buffers overran repeatedly", "excessive_buffer_overrun_errors_total"},
	"VL15_dropped":                    {Error, "VL15 (subnet management) packets dropped", "vl15_dropped_total"},
}

// Lookup describes a counter by name. A counter the catalog does not know
// is an error when its name says so.
func Lookup(name string) Info {
	if i, ok := catalog[name]; ok {
		return i
	}
	if looksLikeError(name) {
		return Info{Kind: Error, Meaning: "a counter of errors the driver keeps"}
	}
	return Info{Kind: Traffic}
}

func looksLikeError(name string) bool {
	for _, w := range []string{"err", "drop", "discard", "retr", "timeout"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}
