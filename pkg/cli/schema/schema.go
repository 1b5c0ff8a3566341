// Package schema holds the JSON Schemas (draft 2020-12) of every rdmactl
// document, the contract of docs/json.md in a form a program checks, and
// validates documents against them. Tests use it on the output of the
// fakes and, in the lab, on the real commands' output.
package schema

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

//go:embed *.schema.json
var files embed.FS

// Error is the name of the error document's schema.
const Error = "error"

// Names lists the schemas: a command's document is named after the
// command ("devinfo", "rxe-status", "ping-server", "serve-line", …).
func Names() []string {
	entries, _ := files.ReadDir(".") // an embedded directory always reads
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".schema.json"))
	}
	sort.Strings(names)
	return names
}

var compiled = sync.OnceValues(compileAll)

// base names the embedded files for the compiler; the schemas carry no
// $id, so their references (error.schema.json#/$defs/…) resolve next to
// the file, for other validators too.
const base = "file:///rdmactl/schema/"

func compileAll() (map[string]*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for _, n := range Names() {
		b, err := files.ReadFile(n + ".schema.json")
		if err != nil {
			return nil, err
		}
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("%s.schema.json: %w", n, err)
		}
		if err := c.AddResource(base+n+".schema.json", doc); err != nil {
			return nil, err
		}
	}
	out := map[string]*jsonschema.Schema{}
	for _, n := range Names() {
		s, err := c.Compile(base + n + ".schema.json")
		if err != nil {
			return nil, fmt.Errorf("%s.schema.json: %w", n, err)
		}
		out[n] = s
	}
	return out, nil
}

// Compile compiles every schema; it fails when one is not a valid schema.
func Compile() error {
	_, err := compiled()
	return err
}

// Validate checks one document (a JSON object, as printed) against the
// named schema.
func Validate(name string, doc []byte) error {
	all, err := compiled()
	if err != nil {
		return err
	}
	s, ok := all[name]
	if !ok {
		return fmt.Errorf("no schema %q (have %s)", name, strings.Join(Names(), ", "))
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := s.Validate(v); err != nil {
		return fmt.Errorf("%s: %w", path.Base(name), err)
	}
	return nil
}

// ValidateResult checks what a command printed on stdout: exactly one
// document, valid against its command's schema or, when the command
// failed (exit status not 0), against the error document's.
func ValidateResult(name string, stdout []byte, exitCode int) error {
	dec := json.NewDecoder(bytes.NewReader(stdout))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("stdout is not a JSON document: %w", err)
	}
	if dec.More() {
		return fmt.Errorf("stdout holds more than one document")
	}
	err := Validate(name, raw)
	if err == nil || exitCode == 0 {
		return err
	}
	if errDoc := Validate(Error, raw); errDoc != nil {
		return fmt.Errorf("neither a %s document nor the error document: %v; %v", name, err, errDoc)
	}
	return nil
}
