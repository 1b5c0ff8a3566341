package main

import (
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli"
	"github.com/rdmactl/rdmactl/pkg/doctor"
)

func TestDoctorFlags(t *testing.T) {
	f := rxeTestFactory()
	f.JSON = true
	var got *doctor.Options
	cmd := newCmdDoctor(f, func(o *doctor.Options) error { got = o; return nil })
	if err := executeCmd(cmd, "--ip", "10.9.0.1", "--facts"); err != nil {
		t.Fatal(err)
	}
	if got.IP != "10.9.0.1" || !got.DumpFacts || !got.JSON || got.IO != f.IO || got.Host != theHost {
		t.Errorf("options %+v", got)
	}
}

func TestDoctorTakesNoArguments(t *testing.T) {
	ran := false
	cmd := newCmdDoctor(rxeTestFactory(), func(*doctor.Options) error { ran = true; return nil })
	err := executeCmd(cmd, "10.9.0.1")
	if ran || cli.ExitCode(err) != cli.ExitUsage {
		t.Errorf("ran=%v err=%v", ran, err)
	}
}
