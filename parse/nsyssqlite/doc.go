// Package nsyssqlite reads Nsight Systems SQLite exports (`nsys export
// --type sqlite`, nsys 2022.1 to 2026.2) into a *trace.Trace.
//
// Open reads:
//
//   - kernels from CUPTI_ACTIVITY_KIND_KERNEL, named by demangledName (or
//     shortName with Options.Names "short") through StringIds;
//   - memcpys and memsets from CUPTI_ACTIVITY_KIND_MEMCPY and _MEMSET, named
//     as nsys's cuda_gpu_sum prints them ("[CUDA memcpy Host-to-Device]",
//     "[CUDA memset]"), from ENUM_CUDA_MEMCPY_OPER or a built-in copy of it;
//   - CUDA runtime and driver calls from CUPTI_ACTIVITY_KIND_RUNTIME as
//     trace.Launch, keeping only calls whose correlation id some GPU
//     activity of the same process carries (correlation ids are unique per
//     process only), named without the "_vNNNNN" suffix;
//   - NVTX push/pop and start/end ranges (eventType 59, 60, 70, 71) from
//     NVTX_EVENTS as trace.RangeCPU, named coalesce(text, StringIds[textId]),
//     with their domain's name (from the eventType 75 row of the same
//     process and domainId); marks and unended ranges are skipped;
//   - processes: one trace.Proc per process with GPU activity or NVTX
//     ranges, sorted by PID, named from PROCESSES; PID and thread id are
//     decoded from globalPid/globalTid (vm<<48 | pid<<24 | tid);
//   - devices from TARGET_INFO_GPU when present, and the nsys and schema
//     versions from META_DATA_EXPORT (EXPORT_META_DATA before 2023.3).
//
// Tables are found by name in sqlite_master and columns by name with
// PRAGMA table_info, never by nsys version: tables are created lazily,
// columns come and go, and users ALTER exported tables.
//
// The file is opened read-only and immutable through a "file:" URI: it is
// never written and no lock is taken. Odd but survivable rows (an end
// before a start, an unknown copyKind, a name missing from StringIds) are
// counted in Trace.Anomalies. An export without kernels fails with an error
// matching ErrNoKernels that says how to capture them; one whose CUDA graphs
// were traced as whole graphs, hiding most GPU time, fails with
// ErrWholeGraphs.
//
// The package needs cgo (github.com/mattn/go-sqlite3).
package nsyssqlite
