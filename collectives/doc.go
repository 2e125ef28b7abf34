// Package collectives matches each collective kernel with its counterparts
// on the other ranks of a run and splits its time into waiting for the
// last rank and transfer: per op and communicator, the straggler, the
// message sizes (from the collective args, the launching CPU op or the
// step's tokens) and the bandwidths against the link
// (docs/definitions.md#collectives). It reads a window.Table and the
// models it was built from; it prints nothing.
package collectives
