package rxe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/host"
)

// AddPersistent is `rxe add --persist`: Add, then record the link (under
// the name it really has) in conf, or ConfPath when conf is empty.
//
// The file is checked before the link is made, and Add's report is held
// back until the link is recorded: stdout never claims a success that the
// exit status denies.
func AddPersistent(opts *AddOptions, conf string) error {
	conf = confPath(conf)
	if err := checkRecordable(conf); err != nil {
		return &cli.ExitError{Code: cli.ExitFailed, Err: cli.WithHint(fmt.Errorf("cannot record the link in %s, so none was created: %v", conf, err),
			"--persist rewrites "+conf+": make its directory writable, or add the link without --persist")}
	}
	report := *opts.IO
	var held bytes.Buffer
	report.Out = &held
	added := *opts
	added.IO = &report
	if err := Add(&added); err != nil {
		_, _ = opts.IO.Out.Write(held.Bytes()) // Add's own failure report
		return err
	}
	h := opts.Host
	devs, err := h.Devices()
	if err != nil {
		return cli.Failf("reading RDMA devices: %v", err)
	}
	dev, ok := rxeOn(devs, opts.Netdev)
	if !ok {
		return cli.Failf("%s has no rxe link any more; nothing recorded", opts.Netdev)
	}
	changed, err := RecordLink(conf, Link{Name: dev.Name, Netdev: dev.Parent})
	if err != nil {
		return cli.Failf("%s was created on %s but not recorded in %s: %v", dev.Name, dev.Parent, conf, err)
	}
	if _, err := opts.IO.Out.Write(held.Bytes()); err != nil {
		return err
	}
	if !opts.JSON {
		verb := "recorded in"
		if !changed {
			verb = "already recorded in"
		}
		fmt.Fprintf(opts.IO.Out, "%s: %s %s (rdmactl rxe apply re-creates it; enable rdmactl-rxe.service for boot)\n", dev.Name, verb, conf)
	}
	return nil
}

// RemovePersistent is `rxe remove --persist`: Remove, and drop the link
// from conf. A link that is recorded but gone from the kernel is only
// dropped from the file.
func RemovePersistent(opts *RemoveOptions, conf string) error {
	conf = confPath(conf)
	removeErr := Remove(opts)
	h := opts.Host
	target := opts.Target
	if removeErr != nil {
		if devs, err := h.Devices(); err == nil {
			if _, exists := findDevice(devs, target); exists {
				return removeErr // it is there and could not be removed
			}
			if _, exists := rxeOn(devs, target); exists {
				return removeErr
			}
		}
	}
	dropped, err := ForgetLink(conf, target)
	if err != nil {
		return cli.Failf("updating %s: %v", conf, err)
	}
	if removeErr != nil && len(dropped) == 0 {
		return removeErr
	}
	if !opts.JSON {
		for _, l := range dropped {
			fmt.Fprintf(opts.IO.Out, "%s: dropped from %s\n", l.Name, conf)
		}
		if len(dropped) == 0 {
			fmt.Fprintf(opts.IO.Out, "%s: was not recorded in %s\n", target, conf)
		}
	}
	return nil
}

// ApplyOptions are the inputs of `rdmactl rxe apply`.
type ApplyOptions struct {
	IO   *cli.IOStreams
	JSON bool
	Conf string        // empty: ConfPath
	Wait time.Duration // how long to wait for a recorded netdev to appear; 0 looks once
	// Timeout bounds each new port's wait for ACTIVE (Add's --timeout).
	Timeout time.Duration
	Host    Host
}

// DefaultApplyWait bounds the wait for a netdev that is not there yet at
// boot (a USB NIC, a veth made by another unit).
const DefaultApplyWait = 30 * time.Second

type applyResult struct {
	Name   string         `json:"device"`
	Netdev string         `json:"netdev"`
	Action string         `json:"action"` // "present", "created", "failed"
	OK     bool           `json:"ok"`
	Error  *cli.ErrorBody `json:"error,omitempty"`
}

// Apply creates every recorded link that is missing; links already there
// are left alone, so running it twice changes nothing. It tries every
// link and fails (exit 1) when any could not be created.
func Apply(opts *ApplyOptions) error {
	h := opts.Host
	conf := confPath(opts.Conf)
	if opts.Wait < 0 {
		return cli.Usagef("invalid --wait %v: want 0 (do not wait) or a positive duration such as 30s", opts.Wait)
	}
	links, err := ReadLinks(conf)
	if err != nil {
		return cli.Failf("%v", err)
	}
	wait := opts.Wait
	var results []applyResult
	failed := 0
	for _, l := range links {
		r := applyResult{Name: l.Name, Netdev: l.Netdev}
		switch err := applyLink(opts, h, l, wait); {
		case err == errPresent:
			r.Action, r.OK = "present", true
		case err != nil:
			r.Action, r.Error = "failed", cli.ErrorOf(err)
			failed++
		default:
			r.Action, r.OK = "created", true
		}
		results = append(results, r)
		if !opts.JSON {
			switch r.Action {
			case "present":
				fmt.Fprintf(opts.IO.Out, "%s: already on %s\n", l.Name, l.Netdev)
			case "failed":
				fmt.Fprintf(opts.IO.ErrOut, "rdmactl: %s on %s: %s\n", l.Name, l.Netdev, r.Error.Message)
			}
		}
	}
	if opts.JSON {
		if results == nil {
			results = []applyResult{}
		}
		doc := struct {
			OK    bool          `json:"ok"`
			Links []applyResult `json:"links"`
		}{failed == 0, results}
		if err := cli.WriteJSON(opts.IO.Out, doc); err != nil {
			return err
		}
	} else if len(links) == 0 {
		fmt.Fprintf(opts.IO.Out, "no links recorded in %s (record one with rdmactl rxe add NETDEV --persist)\n", conf)
	}
	if failed > 0 {
		return cli.SilentExit(cli.ExitFailed)
	}
	return nil
}

var errPresent = errors.New("present")

func applyLink(opts *ApplyOptions, h Host, l Link, wait time.Duration) error {
	devs, err := h.Devices()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading RDMA devices: %v", err)
	}
	if _, ok := rxeOn(devs, l.Netdev); ok {
		return errPresent
	}
	if err := waitNetdev(h, l.Netdev, wait); err != nil {
		return err
	}
	add := &AddOptions{IO: opts.IO, Netdev: l.Netdev, Name: l.Name, Timeout: opts.Timeout, Host: h}
	if opts.JSON {
		// The JSON document is apply's own; Add's report goes nowhere.
		add.IO = cli.Test(nil, io.Discard, opts.IO.ErrOut)
	}
	err = Add(add)
	var ee *cli.ExitError
	if errors.As(err, &ee) && ee.Err != nil {
		return ee.Err
	}
	return err
}

// waitNetdev polls until the netdev exists, at most wait (0: looks once).
func waitNetdev(h Host, name string, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		netdevs, err := h.Netdevs()
		if err == nil {
			if _, err := host.FindNetdev(netdevs, name); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("network device %s did not appear within %v (see `ip link show`)", name, wait)
		}
		time.Sleep(pollInterval)
	}
}
