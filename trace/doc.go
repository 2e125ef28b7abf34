// Package trace is traceq's source-independent model of a GPU trace: the GPU
// activities (kernels, memcpys, memsets), the CPU calls that launched them, the
// annotation ranges that mark steps, and what the trace says about itself.
//
// Every parser produces a *Trace; every analysis consumes one. The package
// imports nothing outside the standard library and does no I/O.
//
// Times are integer nanoseconds on the trace's own clock (Time). Durations are
// integer nanoseconds too. Nothing in the model is ever a float.
//
// Names (kernel names, launch-call names, range names) are interned: each
// record holds a NameID, an index into Trace.Names. A trace of millions of
// kernels typically has a few thousand distinct names, so analyses that
// classify or group by name do the work once per name, not once per event.
package trace
