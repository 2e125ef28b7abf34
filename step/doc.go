// Package step finds the steps of a trace and says which step each GPU
// activity belongs to. Its jobs:
//
//   - markers: which annotation ranges are step markers and what their text
//     says: the step's kind and token count (parseMarker; docs/steps.md#markers);
//   - attribution: the one rule that gives a launch call, and so an
//     activity, its step, record by record (Attributor, for streaming
//     readers such as package slice) or over a parsed trace (Find);
//   - classes: the scope of a window (the whole trace, a step, outside any
//     step) and a step's kind, which groups and tables sort by (Class), and
//     the selection every command's --kind makes (Filter).
//
// It reads the model (package trace) only; it prints nothing.
package step
