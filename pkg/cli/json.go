package cli

import (
	"encoding/json"
	"io"
)

// WriteJSON is rdmactl's one JSON output path: commands hand it their
// document and it writes it to w, indented by two spaces, with a final
// newline and without HTML escaping (addresses and hints stay readable).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// WriteJSONLine writes v as one compact line (JSON lines, for logs that a
// reader follows, such as serve's --json), without HTML escaping.
func WriteJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
