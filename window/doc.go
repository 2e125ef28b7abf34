// Package window reduces an input set to the table every analysis reads
// (Build): one pass over each input's activities that yields
//
//   - the rank table: each process of each input, with its path, pid,
//     distributed rank, host and run (Rank);
//   - each activity name's category, found once (the one category rule,
//     applied once per name), and the fold of --by top;
//   - the (rank, device, step) windows with their sums: kernel, busy, span
//     and idle time, idle by cause, per-category and per-name sums, launch
//     calls, exposed communication and the time between steps (Window);
//   - the launch calls that launched nothing recorded.
//
// It refuses inputs whose sums would overflow 64-bit nanoseconds, so that
// no analysis needs to check. A new per-window figure is a field of
// Window, summed in the pass (window.go); a new attribute of a rank is a
// field of Rank. The figures are defined in docs/definitions.md.
package window
