package record

// DecodeFull is decodeFull for the external tests (decode_test.go, decode_bench_test.go), which
// import audit for its synthetic records.
var DecodeFullLine = decodeFull
