package cli

import (
	"encoding/json"
	"io"
)

// PrettyJSON indents every document (the global --pretty flag); compact,
// one line, is the default, as `rdma -j` prints.
var PrettyJSON bool

// WriteJSON is rdmactl's one JSON output path: commands hand it their
// document (an object) and it writes it to w as the JSON contract says
// (docs/json.md): schema_version first, integers beyond 2^53 as strings,
// compact unless --pretty, a final newline, no HTML escaping.
func WriteJSON(w io.Writer, v any) error { return EncodeDocument(w, v, PrettyJSON) }

// WriteJSONLine writes v as one compact line (JSON lines, for logs that a
// reader follows, such as serve's --json), without HTML escaping.
func WriteJSONLine(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
