//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// labRemote runs commands on host B of the two-host lab (see the script).
const labRemote = "../scripts/lab-remote.sh"

// remote runs a shell command line on host B and returns what it did.
func remote(t *testing.T, limit time.Duration, script string) result {
	t.Helper()
	return run(t, limit, labRemote, script)
}

// remoteSessionsEnded waits up to limit for B to hold no QP but its GSI
// one: serve's sessions end on their clients' silence, which lasts
// longer the slower their round trips were.
func remoteSessionsEnded(t *testing.T, limit time.Duration) bool {
	t.Helper()
	drained := fmt.Sprintf(`for i in $(seq %d); do [ -z "$(rdma res show qp | grep -v 'type GSI')" ] && exit 0; sleep 0.2; done; exit 1`, int(limit/(200*time.Millisecond)))
	return remote(t, limit+time.Minute, drained).Code == 0
}

func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// crossPing runs the server here on host A and the client on host B.
func crossPing(t *testing.T, server, client string, flags []string) (srv, cli result) {
	t.Helper()
	port := freshPort()
	p := []string{"-p", fmt.Sprint(port)}
	clientArgs := append(append(toolArgs(client, "-c"), flags...), p...)
	return runPair(t, 3*time.Minute, server, append(append(toolArgs(server, "-s"), flags...), p...),
		func() { waitListening(t, port) },
		func() result {
			return remote(t, 3*time.Minute, "timeout 170 "+shellJoin(append([]string{client}, clientArgs...)))
		})
}

// TestTwoHostsPingInteropWithRping: rping and rdmactl across a real link
// between two kernels; each side prints what rping prints in its place.
func TestTwoHostsPingInteropWithRping(t *testing.T) {
	flags := []string{"-a", "10.9.1.1", "-v", "-C", "3"}
	realSrv, realCli := crossPing(t, "rping", "rping", flags)
	if realSrv.Code != 0 || realCli.Code != 0 {
		t.Fatalf("rping<->rping across hosts failed: server %+v client %+v", realSrv, realCli)
	}
	_, ourCli := crossPing(t, "rping", rdmactl, flags)
	sameResult(t, "rdmactl client on B against rping server on A", realCli, ourCli)
	ourSrv, _ := crossPing(t, rdmactl, "rping", flags)
	sameResult(t, "rdmactl server on A against rping client on B", realSrv, ourSrv)
}

// TestTwoHostsDemoNVIDIAVariant across the link: a peer
// that sends NVIDIA's 18-byte message, on either side.
func TestTwoHostsDemoNVIDIAVariant(t *testing.T) {
	t.Run("rdmactl-client", func(t *testing.T) {
		port := 19935
		s := start(t, 3*time.Minute, rdmactl, nvidiaPeer(demoArgs("", ownGID(t), port))...)
		waitTCPListen(t, port)
		cli := remote(t, 3*time.Minute, "timeout 170 "+shellJoin(append([]string{rdmactl}, demoArgs("10.9.1.1", remoteGID(t), port)...)))
		checkNVIDIAInterop(t, s.wait(t), cli)
		if want := "Message is: '" + nvidiaMessage + "'\n"; !strings.Contains(cli.Stdout, want) {
			t.Errorf("client output lacks %q:\n%s", want, cli.Stdout)
		}
	})
	t.Run("rdmactl-server", func(t *testing.T) {
		port := 19936
		s := start(t, 3*time.Minute, rdmactl, demoArgs("", ownGID(t), port)...)
		waitTCPListen(t, port)
		cli := remote(t, 3*time.Minute, "timeout 170 "+shellJoin(append([]string{rdmactl}, nvidiaPeer(demoArgs("10.9.1.1", remoteGID(t), port))...)))
		checkNVIDIAInterop(t, s.wait(t), cli)
	})
}
