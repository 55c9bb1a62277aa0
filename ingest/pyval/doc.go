// Package pyval reads values the way Python does, without evaluating anything: ParseList parses a
// flat Python list literal (VLMEvalKit's candidates column) as data, and Str, Eq, Float, Round and
// FloatRepr are Python's str(), ==, float(), round(x, n) and repr(float) of the values json.load
// gives (decoded here with json.Decoder.UseNumber). The harnesses compare values with exactly these
// semantics, so a verdict that ingest recomputes with them is the harness's own.
package pyval
