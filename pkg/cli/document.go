package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// SchemaVersion is the version of rdmactl's JSON contract (docs/json.md).
// It changes only when a field is renamed, removed or changes meaning.
const SchemaVersion = 2

// maxExactInt is 2^53: integers beyond it lose precision in JavaScript
// and in jq, so the contract carries them as decimal strings.
const maxExactInt = 1 << 53

// EncodeDocument writes v as one rdmactl JSON document: schema_version
// first, then v's own members in their declared order, integers whose
// magnitude exceeds 2^53 as strings, compact unless pretty, and a final
// newline. v must encode as a JSON object.
func EncodeDocument(w io.Writer, v any, pretty bool) error {
	var raw bytes.Buffer
	enc := json.NewEncoder(&raw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	out, err := contractJSON(raw.Bytes())
	if err != nil {
		return err
	}
	if pretty {
		var ind bytes.Buffer
		if err := json.Indent(&ind, out, "", "  "); err != nil {
			return err
		}
		out = ind.Bytes()
	}
	out = append(out, '\n')
	_, err = w.Write(out)
	return err
}

// contractJSON rewrites one encoded object token by token, so member order
// is kept: it inserts schema_version as the first member and quotes big
// integers.
func contractJSON(in []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(in))
	dec.UseNumber()
	var out []byte
	// stack holds, per open container, whether it is an object and how many
	// tokens it has seen (to place commas and colons).
	type level struct {
		object bool
		n      int
	}
	var stack []level
	first := true
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if first {
			if d, ok := tok.(json.Delim); !ok || d != '{' {
				return nil, fmt.Errorf("a JSON document must be an object")
			}
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			out = append(out, byte(d))
			continue
		}
		if len(stack) > 0 {
			top := &stack[len(stack)-1]
			switch {
			case top.object && top.n%2 == 1:
				out = append(out, ':')
			case top.n > 0:
				out = append(out, ',')
			}
			top.n++
		}
		switch t := tok.(type) {
		case json.Delim:
			out = append(out, byte(t))
			stack = append(stack, level{object: t == '{'})
			if first {
				out = append(out, `"schema_version":`...)
				out = strconv.AppendInt(out, SchemaVersion, 10)
				stack[0].n = 2
			}
		case json.Number:
			out = appendNumber(out, t)
		case string:
			out = appendString(out, t)
		case bool:
			out = strconv.AppendBool(out, t)
		case nil:
			out = append(out, "null"...)
		}
		first = false
	}
	return out, nil
}

// appendString quotes s as encoding/json does, without HTML escaping
// (addresses and hints stay readable).
func appendString(out []byte, s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return append(out, bytes.TrimSuffix(b.Bytes(), []byte{'\n'})...)
}

func appendNumber(out []byte, n json.Number) []byte {
	if beyondExactInt(string(n)) {
		return strconv.AppendQuote(out, string(n))
	}
	return append(out, n...)
}

// beyondExactInt reports whether the JSON number s is an integer whose
// magnitude exceeds 2^53; one too large for int64 is beyond it too.
func beyondExactInt(s string) bool {
	if strings.ContainsAny(s, ".eE") {
		return false
	}
	i, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return errors.Is(err, strconv.ErrRange)
	}
	return i > maxExactInt || i < -maxExactInt
}

// ErrorBody is every document's error member: the top-level one of a
// failed command (with the exit code) and those of single items in a list
// (a link, a client) that failed.
type ErrorBody struct {
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	// Code is the process's exit code; items have none.
	Code int `json:"code,omitempty"`
}

// ErrorOf describes err as an item's error member: its message and, if it
// has one, its hint.
func ErrorOf(err error) *ErrorBody {
	return &ErrorBody{Message: err.Error(), Hint: HintOf(err)}
}

// HintOf is the hint err or an error it wraps carries, or "".
func HintOf(err error) string {
	var h Hinted
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}

// ErrorDocument is what a command prints on stdout in JSON mode when it
// failed before it could print a document of its own.
type ErrorDocument struct {
	OK    bool      `json:"ok"`
	Error ErrorBody `json:"error"`
}

// Hinted is an error that knows the likely fix.
type Hinted interface{ Hint() string }

// WithHint attaches the likely fix to err; main prints it on its own
// "hint:" line, the error document in its hint member.
func WithHint(err error, hint string) error {
	if hint == "" {
		return err
	}
	return hintedError{err, hint}
}

type hintedError struct {
	error
	hint string
}

func (e hintedError) Hint() string  { return e.hint }
func (e hintedError) Unwrap() error { return e.error }

// NewErrorDocument describes err: its message, its hint if it has one, and
// the exit code the process ends with.
func NewErrorDocument(err error) ErrorDocument {
	body := ErrorOf(err)
	body.Code = ExitCode(err)
	if IsSilent(err) {
		// The command printed its tool's own message on stderr.
		body.Message = fmt.Sprintf("failed with exit status %d; the message is on standard error", body.Code)
	}
	return ErrorDocument{Error: *body}
}
