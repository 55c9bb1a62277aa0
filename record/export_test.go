package record

// DecodeRecord is decodeRecord for the external tests (decode_test.go, decode_bench_test.go), which
// import audit for its synthetic records.
var DecodeRecord = decodeRecord
