// Package nsyssqlite reads Nsight Systems SQLite exports (`nsys export
// --type sqlite`, nsys 2022.1 to 2026.2) into a *trace.Trace.
//
// Open reads:
//
//   - kernels from CUPTI_ACTIVITY_KIND_KERNEL, named by demangledName (or
//     shortName with Options.Names "short") through StringIds, with their
//     launch configuration (grid, block, registers, static and dynamic
//     shared memory) as trace attributes where the columns exist;
//   - memcpys and memsets from CUPTI_ACTIVITY_KIND_MEMCPY and _MEMSET, named
//     as nsys's cuda_gpu_sum prints them ("[CUDA memcpy Host-to-Device]",
//     "[CUDA memset]"), from ENUM_CUDA_MEMCPY_OPER or a built-in copy of it;
//   - CUDA runtime and driver calls as trace.Launch, from
//     CUPTI_ACTIVITY_KIND_RUNTIME, where nsys writes both
//     (cudaLaunchKernel_v7000 with eventClass 0; cuLaunchKernel,
//     cuLaunchKernelEx, cuGraphLaunch with eventClass 1), and from a
//     CUPTI_ACTIVITY_KIND_DRIVER table with the same columns where an export
//     has one (none seen so far); only calls whose correlation id some GPU
//     activity of the same process carries are kept (correlation ids are
//     unique per process only), named without the "_vNNNNN" suffix;
//   - NVTX push/pop and start/end ranges (eventType 59, 60, 70, 71) from
//     NVTX_EVENTS as trace.RangeCPU, named coalesce(text, StringIds[textId]),
//     with their domain's name (from the eventType 75 row of the same
//     process and domainId); marks and unended ranges are skipped;
//   - processes: one trace.Proc per process with GPU activity or NVTX
//     ranges, sorted by PID, named from PROCESSES; PID and thread id are
//     decoded from globalPid/globalTid (vm<<48 | pid<<24 | tid);
//   - devices from TARGET_INFO_GPU when present (name, chip, SMs, memory,
//     clock, bandwidth, L2, compute capability, per-SM limits), and the
//     nsys and schema versions from META_DATA_EXPORT (EXPORT_META_DATA
//     before 2023.3).
//
// Tables are found by name in sqlite_master and columns by name with
// PRAGMA table_info, never by nsys version: tables are created lazily,
// columns come and go, and users ALTER exported tables.
//
// The file is opened read-only and immutable through a "file:" URI: it is
// never written, nothing is created next to it (no -shm), no journal is
// rolled back and no lock is taken, so it reads on read-only media and
// while nsys or a viewer holds it. An immutable read ignores -wal and
// -journal files, so Open refuses, with ErrUnfinishedWrite, an export
// whose -wal file holds frames (committed rows may be there only; reading
// them needs a -shm index written next to the input) or whose rollback
// journal has a synced header (a writer is at work or crashed after
// putting pages of an uncommitted transaction into the file). A writer
// that has not yet touched the file leaves a journal whose header is still
// zero (unless it runs with synchronous=OFF), and does not stop the read. The file's size, time and change counter are
// compared before and after the read, so a write during it is refused too.
// `sqlite3 FILE 'SELECT 1 FROM sqlite_master'`, once no program uses the
// file, merges a -wal or rolls a journal back.
//
// Rows are read whatever their rowids: memory follows the rows present
// (slices are sized from count(*), and the dense tables for name and
// correlation ids grow only with the rows), never rowid or id values. A row
// with a NULL where nsys's schema says NOT NULL, or a REAL (fraction, Inf,
// 1e300), TEXT or BLOB where it writes integers, is skipped and counted
// in Trace.Anomalies with the first as an example, as the Chrome parser
// skips odd events; so are GPU activities and API calls longer than
// trace.MaxActivityDur ("GPU activity longer than 1 h skipped", the Chrome
// parser's words). An end before its start reads as zero length, as there.
// Other odd but survivable rows (an unknown copyKind, a name missing from
// StringIds) are counted too.
//
// Errors do not name the file (the caller does) and wrap their cause. A
// damaged file (SQLite finds a malformed page, the file is truncated), a
// SQLite file that is not an nsys export, or one whose kernel rows are all
// unreadable fails with an error matching ErrCorrupt whose text starts
// "corrupt or not an nsys export: ". An export without kernels fails with
// an error matching ErrNoKernels that says how to capture them: the kernel
// table is then absent or empty in a sound file. One whose CUDA graphs
// were traced as whole graphs, hiding most GPU time, fails with
// ErrWholeGraphs.
//
// The package needs cgo (github.com/mattn/go-sqlite3): the big tables are
// read through the C API of the SQLite go-sqlite3 bundles (sqlite_cgo.go).
package nsyssqlite
