// Package findings turns what traceq measured into what to fix first:
// per run and step kind, a short list of findings ordered by the time per
// step a fix would save, each with its evidence and the usual remedy —
// the straggler, the transfer against the link or its fixed cost,
// launch-bound idle time, the gap between steps, exposed communication —
// then what the trace lacks for a better answer (capture gaps).
//
// It joins the analyses (the breakdown of package analyze, the matched
// collectives of package collectives) and returns plain data; package
// render prints it. Each saving is a first-order estimate defined once in
// docs/definitions.md#findings, with what it assumes and its error
// measured against generated runs where the fix was made
// (counterfactual_test.go).
package findings
