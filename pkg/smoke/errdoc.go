package smoke

// ErrorDoc is the JSON document of a smoke or serve run that could not
// start: the same shape as every rdmactl command's error document.
type ErrorDoc struct {
	SchemaVersion int       `json:"schema_version"`
	OK            bool      `json:"ok"`
	Error         ErrorBody `json:"error"`
}

// ErrorBody says what went wrong and what to do.
type ErrorBody struct {
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
	Code    string `json:"code"` // "usage" (exit 2) or "failed" (exit 1)
}

// Error codes of ErrorBody.
const (
	CodeUsage  = "usage"
	CodeFailed = "failed"
)

// NewErrorDoc builds the document.
func NewErrorDoc(code, message, hint string) ErrorDoc {
	return ErrorDoc{SchemaVersion: SchemaVersion, Error: ErrorBody{Message: message, Hint: hint, Code: code}}
}
