package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestConfigPrecedenceFlagOverEnvOverFile(t *testing.T) {
	path := writeConfig(t, "device: file0\nib_port: 3\ntcp_port: 1111\n")
	t.Setenv("RDMACTL_IB_PORT", "4")
	t.Setenv("RDMACTL_TCP_PORT", "2222")

	flags := pflag.NewFlagSet("x", pflag.ContinueOnError)
	flags.String("ib-dev", "default0", "")
	flags.Int("ib-port", 1, "")
	flags.Int("port", 19875, "")
	if err := flags.Parse([]string{"--port", "3333"}); err != nil {
		t.Fatal(err)
	}
	f := &Factory{ConfigPath: path}
	v, err := f.BindFlags(flags, map[string]string{KeyDevice: "ib-dev", KeyIBPort: "ib-port", KeyTCPPort: "port"})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.GetString(KeyDevice); got != "file0" {
		t.Errorf("device = %q, want the file's value over the flag default", got)
	}
	if got := v.GetInt(KeyIBPort); got != 4 {
		t.Errorf("ib_port = %d, want the environment's 4 over the file's 3", got)
	}
	if got := v.GetInt(KeyTCPPort); got != 3333 {
		t.Errorf("tcp_port = %d, want the explicit flag's 3333", got)
	}
}

func TestConfigFlagDefaultWhenNothingElse(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	flags := pflag.NewFlagSet("x", pflag.ContinueOnError)
	flags.Int("ib-port", 1, "")
	f := &Factory{}
	v, err := f.BindFlags(flags, map[string]string{KeyIBPort: "ib-port"})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.GetInt(KeyIBPort); got != 1 {
		t.Errorf("ib_port = %d, want the flag default 1", got)
	}
}

func TestConfigXDGFileIsFound(t *testing.T) {
	xdg := t.TempDir()
	if err := os.MkdirAll(filepath.Join(xdg, "rdmactl"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(xdg, "rdmactl", "config.yaml"), []byte("device: xdg0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", xdg)
	v, err := LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if got := v.GetString(KeyDevice); got != "xdg0" {
		t.Errorf("device = %q, want xdg0 from $XDG_CONFIG_HOME/rdmactl/config.yaml", got)
	}
}

func TestConfigMissingExplicitFileIsUsageError(t *testing.T) {
	_, err := LoadConfig("/nonexistent/rdmactl.yaml")
	if ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "/nonexistent/rdmactl.yaml") {
		t.Fatalf("err = %v (exit %d), want a usage error naming the file", err, ExitCode(err))
	}
}

func TestConfigMalformedFileIsUsageError(t *testing.T) {
	_, err := LoadConfig(writeConfig(t, "device: [unclosed\n"))
	if ExitCode(err) != ExitUsage {
		t.Fatalf("err = %v, want a usage error", err)
	}
}

func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		err    error
		code   int
		silent bool
	}{
		{nil, 0, false},
		{Failf("x"), 1, false},
		{Usagef("x"), 2, false},
		{SilentExit(255), 255, true},
		{os.ErrNotExist, 1, false},
	} {
		if ExitCode(c.err) != c.code || IsSilent(c.err) != c.silent {
			t.Errorf("%v: code %d silent %v, want %d %v", c.err, ExitCode(c.err), IsSilent(c.err), c.code, c.silent)
		}
	}
}

func TestPaletteIsPlainWithoutColor(t *testing.T) {
	var out bytes.Buffer
	ios := Test(nil, &out, &out)
	if got := ios.Palette().Red("fail"); got != "fail" {
		t.Errorf("Red = %q with colour off, want plain text", got)
	}
	ios.colorEnabled = true
	if got := ios.Palette().Red("fail"); got == "fail" || !strings.Contains(got, "fail") {
		t.Errorf("Red = %q with colour on, want an escape sequence around the text", got)
	}
}

// A bad default is reported against its source, not as a flag the user
// never gave; an explicit flag is left to the command to check.
func TestBadDefaultsNameTheirSource(t *testing.T) {
	path := writeConfig(t, "gid_index: banana\nib_port: 0\n")
	newFlags := func(args ...string) *pflag.FlagSet {
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		fs.String("gid-idx", "auto", "")
		fs.String("ib-port", "1", "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	keys := map[string]string{KeyGIDIndex: "gid-idx"}
	f := &Factory{ConfigPath: path, IO: Test(nil, &bytes.Buffer{}, &bytes.Buffer{})}
	_, err := f.BindFlags(newFlags(), keys)
	want := `invalid ` + path + `:gid_index "banana" (the default for --gid-idx): want a GID index from 0 to 255 (see 'rdmactl gids') or auto`
	if ExitCode(err) != ExitUsage || err.Error() != want {
		t.Errorf("config key: %v\nwant %s", err, want)
	}
	if _, err := f.BindFlags(newFlags("--gid-idx", "2"), keys); err != nil {
		t.Errorf("explicit flag over a bad config value: %v", err)
	}
	t.Setenv("RDMACTL_IB_PORT", "x")
	_, err = f.BindFlags(newFlags(), map[string]string{KeyIBPort: "ib-port"})
	want = `invalid RDMACTL_IB_PORT "x" (the default for --ib-port): want a port number from 1 to 255`
	if ExitCode(err) != ExitUsage || err.Error() != want {
		t.Errorf("environment: %v\nwant %s", err, want)
	}
}

func TestUnknownConfigKeysAreWarned(t *testing.T) {
	path := writeConfig(t, "devcie: rxe1\ndevice: rxe0\n")
	var errOut bytes.Buffer
	f := &Factory{ConfigPath: path, IO: Test(nil, &bytes.Buffer{}, &errOut)}
	if _, err := f.Config(); err != nil {
		t.Fatal(err)
	}
	want := `rdmactl: warning: ` + path + `: unknown key "devcie" ignored (known: device, ib_port, gid_index, tcp_port)` + "\n"
	if errOut.String() != want {
		t.Errorf("stderr %q\nwant   %q", errOut.String(), want)
	}
}
