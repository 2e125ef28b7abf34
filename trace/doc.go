// Package trace is traceq's source-independent model of a GPU trace: the GPU
// activities (kernels, memcpys, memsets), the CPU calls that launched them, the
// annotation ranges that mark steps, what the trace says about each of them
// beyond time and place (attributes), and what it says about itself.
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
//
// Attributes follow the same idea (attr.go): an Activity or Launch holds an
// AttrID into Trace.Attrs, whose entries point to an interned launch
// configuration (grid, block, registers, shared memory: Trace.Configs), to
// the CPU op that launched the work (Trace.Ops, one per call) and through it
// to the op's interned name and argument shapes (Trace.OpSigs). Id 0 of
// every table means "none", so a record without attributes costs nothing
// (Activity.Attr lives in what was padding), and the records that share
// attributes share one entry: Perfetto's args table and pprof's NumLabel
// are the models. Per device, Meta.Devices gives name, SM count, clock and
// memory.
package trace
