// Package chrometrace reads Kineto / torch.profiler Chrome-trace JSON,
// plain or gzip-compressed, into the model (package trace).
//
// Parse streams the document: a splitter (split.go) finds the elements of
// traceEvents in fixed-size blocks without holding the file, workers decode
// blocks of whole events in parallel into GPU activities, launch calls,
// annotation ranges and collective args (decode.go, through the one
// tokenizer of tok.go), and a merger puts them in file order; what lies
// outside traceEvents (distributedInfo, deviceProperties, …) is read as
// metadata. Reader.ReadEvent returns the same records one at a time, for
// tools that copy raw events (package slice).
//
// Odd but survivable events are skipped and counted in Trace.Anomalies; a
// file that ends early keeps what was read whole and says so in
// Trace.Truncated (ErrTruncated for a Reader). Malformed JSON
// (SyntaxError), a corrupt gzip stream (ErrCorruptGzip) and JSON that is
// not a trace (ErrNotTrace) are errors. Field meanings and units are in
// docs/definitions.md.
//
// It is the only package that imports github.com/tidwall/gjson.
package chrometrace
