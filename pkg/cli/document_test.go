package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/rdmactl/rdmactl/pkg/cli/schema"
)

type sample struct {
	Name   string   `json:"name"`
	Big    uint64   `json:"big"`
	Small  int64    `json:"small"`
	Neg    int64    `json:"neg"`
	Ratio  float64  `json:"ratio"`
	List   []int    `json:"list"`
	Nested []nested `json:"nested"`
	Hint   string   `json:"hint"`
	None   *int     `json:"none"`
}

type nested struct {
	A bool              `json:"a"`
	M map[string]uint64 `json:"m"`
}

func TestEncodeDocumentCompact(t *testing.T) {
	v := sample{
		Name: "rxe0", Big: 18446744073709551615, Small: 1 << 53, Neg: -(1 << 60), Ratio: 0.25,
		List: []int{}, Nested: []nested{{A: true, M: map[string]uint64{"x": 1}}}, Hint: "use <ip> & -g 1",
	}
	var b bytes.Buffer
	if err := EncodeDocument(&b, v, false); err != nil {
		t.Fatal(err)
	}
	want := `{"schema_version":2,"name":"rxe0","big":"18446744073709551615","small":9007199254740992,"neg":"-1152921504606846976","ratio":0.25,"list":[],"nested":[{"a":true,"m":{"x":1}}],"hint":"use <ip> & -g 1","none":null}` + "\n"
	if b.String() != want {
		t.Fatalf("got  %s\nwant %s", b.String(), want)
	}
}

func TestEncodeDocumentPretty(t *testing.T) {
	var b bytes.Buffer
	if err := EncodeDocument(&b, struct {
		OK bool `json:"ok"`
	}{true}, true); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"schema_version\": 2,\n  \"ok\": true\n}\n"; b.String() != want {
		t.Fatalf("got %q want %q", b.String(), want)
	}
}

func TestEncodeDocumentEmptyObject(t *testing.T) {
	var b bytes.Buffer
	if err := EncodeDocument(&b, struct{}{}, false); err != nil {
		t.Fatal(err)
	}
	if b.String() != "{\"schema_version\":2}\n" {
		t.Fatalf("got %q", b.String())
	}
}

func TestEncodeDocumentRefusesNonObjects(t *testing.T) {
	if err := EncodeDocument(&bytes.Buffer{}, []int{1}, false); err == nil {
		t.Fatal("an array was accepted as a document")
	}
}

type hinted struct{ error }

func (hinted) Hint() string { return "run rdmactl doctor" }

func TestErrorDocument(t *testing.T) {
	err := &ExitError{Code: ExitUsage, Err: hinted{fmt.Errorf("invalid --ib-port 0")}}
	var b bytes.Buffer
	if e := EncodeDocument(&b, NewErrorDocument(err), false); e != nil {
		t.Fatal(e)
	}
	want := `{"schema_version":2,"ok":false,"error":{"message":"invalid --ib-port 0","hint":"run rdmactl doctor","code":2}}` + "\n"
	if b.String() != want {
		t.Fatalf("got  %s\nwant %s", b.String(), want)
	}
	if err := schema.Validate(schema.Error, b.Bytes()); err != nil {
		t.Errorf("against its schema: %v", err)
	}
}

func FuzzEncodeDocument(f *testing.F) {
	f.Add(`{"a":[1,2,{"b":null}],"c":"d"}`)
	f.Add(`{"n":123456789012345678901234567890}`)
	f.Fuzz(func(t *testing.T, in string) {
		var v map[string]any
		if json.Unmarshal([]byte(in), &v) != nil {
			return
		}
		var b bytes.Buffer
		if err := EncodeDocument(&b, json.RawMessage(in), false); err != nil {
			return // not an object at the top, or not valid as raw JSON
		}
		var back map[string]any
		if err := json.Unmarshal(b.Bytes(), &back); err != nil {
			t.Fatalf("output does not parse: %v\n%s", err, b.String())
		}
		if back["schema_version"] != float64(SchemaVersion) {
			t.Fatalf("schema_version missing: %s", b.String())
		}
	})
}

func TestBeyondExactInt(t *testing.T) {
	for s, want := range map[string]bool{
		"9007199254740992":      false,
		"9007199254740993":      true,
		"-9007199254740992":     false,
		"-9007199254740993":     true,
		"-99999999999999999999": true,
		"1e300":                 false, // a float is never quoted
		"9007199254740993.0":    false,
		"0":                     false,
	} {
		if got := beyondExactInt(s); got != want {
			t.Errorf("beyondExactInt(%s) = %v, want %v", s, got, want)
		}
	}
}
