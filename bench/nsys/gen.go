// Command gen writes a synthetic nsys-like SQLite export for benchmarking
// traceq's nsys reader: N kernels with realistic, skewed, long templated
// names, a launch call per kernel (plus calls that launch nothing), a few
// processes and devices, memcpys, memsets and NVTX ranges.
//
// The tables use the column lists of a real nsys 2026.2 export, so rows are
// as wide as in real files and reading them costs what it costs there.
//
//	go run ./bench/nsys -n 5000000 -o /tmp/bench.sqlite
package main

import (
	"cmp"
	"database/sql"
	"flag"
	"fmt"
	"log"
	"math/rand"
	"os"
	"slices"
	"strings"

	_ "github.com/mattn/go-sqlite3"
)

const schema = `
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT NOT NULL, value TEXT);
CREATE TABLE PROCESSES (globalPid INTEGER, pid INTEGER, name TEXT);
CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);
CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER NOT NULL, duration INTEGER NOT NULL, startTime INTEGER NOT NULL, stopTime INTEGER NOT NULL);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, isDiscrete INTEGER,
  l2CacheSize INTEGER, totalMemory INTEGER, memoryBandwidth INTEGER, clockRate INTEGER, smCount INTEGER, uuid TEXT,
  chipName TEXT, cuDevice INTEGER, computeMajor INTEGER, computeMinor INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, cacheConfig INTEGER,
  registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL, gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL,
  blockX INTEGER NOT NULL, blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL, staticSharedMemory INTEGER NOT NULL,
  dynamicSharedMemory INTEGER NOT NULL, localMemoryPerThread INTEGER NOT NULL, localMemoryTotal INTEGER NOT NULL,
  gridId INTEGER NOT NULL, sharedMemoryExecuted INTEGER, graphNodeId INTEGER, sharedMemoryLimitConfig INTEGER,
  qmdBulkReleaseDone INTEGER, qmdPreexitDone INTEGER, qmdLastCtaDone INTEGER, graphId INTEGER, clusterX INTEGER,
  clusterY INTEGER, clusterZ INTEGER, clusterSchedulingPolicy INTEGER, maxPotentialClusterSize INTEGER,
  maxActiveClusters INTEGER, sharedMemoryRequestedPercentage INTEGER, tensorSizeMinusOneElements TEXT NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL,
  globalTid INTEGER, correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER, srcKind INTEGER, dstKind INTEGER,
  srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER, dstContextId INTEGER, migrationCause INTEGER,
  graphNodeId INTEGER, virtualAddress INTEGER, copyCount INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL,
  contextId INTEGER NOT NULL, greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER,
  value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER, memKind INTEGER);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER,
  category INTEGER, color INTEGER, text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER,
  uint64Value INTEGER, int64Value INTEGER, doubleValue REAL, uint32Value INTEGER, int32Value INTEGER, floatValue REAL,
  jsonTextId INTEGER, jsonText TEXT, binaryData TEXT);
`

func main() {
	n := flag.Int("n", 5_000_000, "number of kernel rows")
	out := flag.String("o", "bench.sqlite", "output file (overwritten)")
	nprocs := flag.Int("procs", 4, "processes, one GPU each")
	nnames := flag.Int("names", 2000, "distinct kernel names")
	seed := flag.Int64("seed", 1, "random seed")
	flag.Parse()
	if err := gen(*out, *n, *nprocs, *nnames, *seed); err != nil {
		log.Fatal(err)
	}
}

// batch collects rows for one multi-row INSERT, so that the generator is
// not bound by per-statement overhead.
type batch struct {
	tx    *sql.Tx
	table string
	ncol  int
	rows  int
	args  []any
	stmt  *sql.Stmt
}

const rowsPerInsert = 256

func (b *batch) add(vals ...any) error {
	if len(vals) != b.ncol {
		return fmt.Errorf("%s: %d values for %d columns", b.table, len(vals), b.ncol)
	}
	b.args = append(b.args, vals...)
	b.rows++
	if b.rows == rowsPerInsert {
		return b.flush()
	}
	return nil
}

func (b *batch) flush() error {
	if b.rows == 0 {
		return nil
	}
	var err error
	if b.rows == rowsPerInsert && b.stmt != nil {
		_, err = b.stmt.Exec(b.args...)
	} else {
		q := insertSQL(b.table, b.ncol, b.rows)
		if b.rows == rowsPerInsert {
			if b.stmt, err = b.tx.Prepare(q); err != nil {
				return err
			}
			_, err = b.stmt.Exec(b.args...)
		} else {
			_, err = b.tx.Exec(q, b.args...)
		}
	}
	b.rows = 0
	b.args = b.args[:0]
	return err
}

func insertSQL(table string, ncol, nrows int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", ncol), ",") + ")"
	return "INSERT INTO " + table + " VALUES " + strings.TrimSuffix(strings.Repeat(row+",", nrows), ",")
}

// kernelName is one synthetic kernel: its three StringIds and its typical
// duration.
type kernelName struct {
	demangled, short, mangled int64
	dur                       int64 // ns
	nccl                      bool
	// The launch configurations it is launched with: a kernel keeps its
	// block size, registers and shared memory and takes a few grid sizes
	// (real exports have about as many configurations as kernel names:
	// 44 for the 23k kernels of the gtls one, 32 for the 3.6k of torchrun).
	regs, smem int32
	grids      [3]int32
}

var (
	dtypes  = []string{"c10::BFloat16", "c10::Half", "float", "signed char", "__nv_fp8_e4m3"}
	ops     = []string{"add", "mul", "silu", "gelu", "bfloat16_copy", "direct_copy", "exp", "rsqrt", "div_true", "neg", "sigmoid", "where"}
	tiles   = []int{64, 128, 192, 256}
	ncclOps = []string{"AllReduce_Sum", "AllGather", "ReduceScatter_Sum", "SendRecv", "Broadcast"}
	algos   = []string{"RING_LL", "RING_LL128", "RING_SIMPLE", "TREE_LL", "NVLS_SIMPLE"}
)

// makeName returns a distinct long, templated demangled name and its short
// name, in the styles seen in real LLM-inference exports.
func makeName(r *rand.Rand, i int) (demangled, short string, nccl bool) {
	d := dtypes[r.Intn(len(dtypes))]
	switch i % 7 {
	case 0, 1:
		op := ops[r.Intn(len(ops))]
		return fmt.Sprintf("void at::native::vectorized_elementwise_kernel<(int)%d, at::native::%s_kernel_cuda(at::TensorIteratorBase &)::[lambda() (instance %d)]::operator ()() const::[lambda() (instance %d)]::operator ()() const::[lambda(%s) (instance %d)], std::array<char *, (unsigned long)%d>>(int, T2, T3)",
			4<<r.Intn(2), op, 1+r.Intn(4), 1+r.Intn(4), d, i, 2+r.Intn(2)), "vectorized_elementwise_kernel", false
	case 2:
		m, n := tiles[r.Intn(len(tiles))], tiles[r.Intn(len(tiles))]
		return fmt.Sprintf("void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_%dx%d_%dx%d_nn_align8_%d>(T1::Params)", m, n, 32<<r.Intn(2), 3+r.Intn(3), i),
			"cutlass::Kernel2", false
	case 3:
		m, n := tiles[r.Intn(len(tiles))], tiles[r.Intn(len(tiles))]
		s := fmt.Sprintf("nvjet_tst_%dx%d_64x%d_%dx1_v_bz_coopB_bias_TNN_%d", m, n, 3+r.Intn(4), 1+r.Intn(2), i)
		return s, s, false
	case 4:
		return fmt.Sprintf("void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<%d, %d, %d, %d, false, false, cutlass::bfloat16_t, Flash_kernel_traits<%d, %d, %d, %d, cutlass::bfloat16_t>>, false, true, false, false, true, true, false, false>(flash::Flash_fwd_params) /*%d*/",
			64<<r.Intn(2), 64<<r.Intn(2), 64<<r.Intn(2), 4, 128, 64, 128, 4, i), "flash_fwd_kernel", false
	case 5:
		return fmt.Sprintf("ncclDevKernel_%s_%s_%s(ncclDevKernelArgsStorage<(unsigned long)%d>) /*%d*/",
			ncclOps[r.Intn(len(ncclOps))], strings.ReplaceAll(d, "::", "_"), algos[r.Intn(len(algos))], 4096, i), "ncclDevKernel_" + ncclOps[i%len(ncclOps)], true
	default:
		return fmt.Sprintf("void vllm::rms_norm_kernel<%s, %d, %d>(%s *, const %s *, const %s *, float, int, int) /*%d*/", d, 8<<r.Intn(3), r.Intn(2), d, d, d, i),
			"vllm::rms_norm_kernel", false
	}
}

// krow is a kernel row held back until all are generated.
type krow struct {
	start, dur, corr, gpid, gridID int64
	name                           kernelName
	dev, stream, regs, grid, smem  int32
}

func gen(path string, n, nprocs, nnames int, seed int64) error {
	os.Remove(path)
	db, err := sql.Open("sqlite3", "file:"+path+"?_journal_mode=OFF&_synchronous=OFF")
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(schema); err != nil {
		return err
	}
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	r := rand.New(rand.NewSource(seed))

	// Strings.
	strs := &batch{tx: tx, table: "StringIds", ncol: 2}
	nextID := int64(1)
	str := map[string]int64{}
	intern := func(s string) (int64, error) {
		if id, ok := str[s]; ok {
			return id, nil
		}
		id := nextID
		nextID++
		str[s] = id
		return id, strs.add(id, s)
	}
	names := make([]kernelName, 0, nnames)
	seen := map[string]bool{}
	for i := 0; len(names) < nnames; i++ {
		d, s, nccl := makeName(r, i)
		if seen[d] {
			continue
		}
		seen[d] = true
		var k kernelName
		if k.demangled, err = intern(d); err != nil {
			return err
		}
		if k.short, err = intern(s); err != nil {
			return err
		}
		if k.mangled, err = intern(fmt.Sprintf("_Z%d%sv", len(s), strings.NewReplacer(":", "", " ", "").Replace(s)) + fmt.Sprint(i)); err != nil {
			return err
		}
		// Durations spread over 1.5 µs .. ~2 ms, heavier for GEMM/attention.
		k.dur = 1500 + int64(r.ExpFloat64()*float64(20_000*(1+i%5)))
		k.nccl = nccl
		k.regs, k.smem = int32(32+r.Intn(100)), int32(r.Intn(2)*49152)
		for g := range k.grids {
			k.grids[g] = int32(1 + r.Intn(1024))
		}
		names = append(names, k)
	}
	apis := map[string]int64{}
	for _, s := range []string{"cudaLaunchKernel_v7000", "cuLaunchKernelEx", "cudaMemcpyAsync_v3020", "cudaMemsetAsync_v3020",
		"cudaStreamIsCapturing_v10000", "cudaGetDevice_v3020", "cudaEventRecord_v3020", "cudaStreamSynchronize_v3020"} {
		if apis[s], err = intern(s); err != nil {
			return err
		}
	}
	ncclCalls := []int64{}
	for _, s := range []string{"ncclAllReduce", "ncclGroupStart", "ncclGroupEnd"} {
		id, err := intern(s)
		if err != nil {
			return err
		}
		ncclCalls = append(ncclCalls, id)
	}

	meta := &batch{tx: tx, table: "META_DATA_EXPORT", ncol: 2}
	for _, kv := range [][2]string{{"EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"}, {"EXPORT_PRODUCT_VERSION", "2026.2.1.210"},
		{"EXPORT_SCHEMA_VERSION", "3.25.0"}, {"EXPORT_PARAM_LAZY", "true"}, {"GENERATED_BY", "traceq bench/nsys/gen.go"}} {
		if err := meta.add(kv[0], kv[1]); err != nil {
			return err
		}
	}
	enum := &batch{tx: tx, table: "ENUM_CUDA_MEMCPY_OPER", ncol: 3}
	for i, l := range []string{"Unknown", "Host-to-Device", "Device-to-Host", "Host-to-Array", "Array-to-Host", "Array-to-Array",
		"Array-to-Device", "Device-to-Array", "Device-to-Device", "Host-to-Host", "Peer-to-Peer"} {
		if err := enum.add(i, "CUDA_MEMCPY_KIND_"+strings.ToUpper(l), l); err != nil {
			return err
		}
	}
	const vm = int64(1) << 48
	const t0 = int64(50_000_000_000)
	procs := &batch{tx: tx, table: "PROCESSES", ncol: 3}
	gpus := &batch{tx: tx, table: "TARGET_INFO_GPU", ncol: 15}
	for p := 0; p < nprocs; p++ {
		pid := int64(4000 + p)
		if err := procs.add(vm|pid<<24, pid, "python3"); err != nil {
			return err
		}
		if err := gpus.add(0, p, "NVIDIA H100 80GB HBM3", fmt.Sprintf("0000:%02x:00.0", 0x18+p), 1, 52428800, int64(85899345920),
			3352320000000, 1980000000, 132, fmt.Sprintf("GPU-%08x", p), "GH100", p, 9, 0); err != nil {
			return err
		}
	}
	for _, pid := range []int64{1, 98, 128} { // processes without GPU work
		if err := procs.add(vm|pid<<24, pid, "bash"); err != nil {
			return err
		}
	}

	// Zipf-distributed name choice: a few kernels dominate, as in real runs.
	zipf := rand.NewZipf(r, 1.1, 4, uint64(nnames-1))
	kern := &batch{tx: tx, table: "CUPTI_ACTIVITY_KIND_KERNEL", ncol: 40}
	rt := &batch{tx: tx, table: "CUPTI_ACTIVITY_KIND_RUNTIME", ncol: 8}
	mc := &batch{tx: tx, table: "CUPTI_ACTIVITY_KIND_MEMCPY", ncol: 21}
	ms := &batch{tx: tx, table: "CUPTI_ACTIVITY_KIND_MEMSET", ncol: 12}
	nvtx := &batch{tx: tx, table: "NVTX_EVENTS", ncol: 20}

	type proc struct {
		pid, tid, gpid, gtid int64
		clock                int64 // next CPU time
		gpu                  [2]int64
		corr                 int64
		kernels              int
		step                 int64 // start of the open step range
		layer                int64
	}
	ps := make([]*proc, nprocs)
	for p := range ps {
		pid := int64(4000 + p)
		ps[p] = &proc{pid: pid, tid: pid, gpid: vm | pid<<24, gtid: vm | pid<<24 | pid, clock: t0 + int64(p)*1000,
			corr: 100, step: -1, layer: -1}
		ps[p].gpu = [2]int64{ps[p].clock, ps[p].clock}
		if err := nvtx.add(t0-1000, nil, 75, nil, nil, nil, "NCCL", ps[p].gtid, nil, nil, 1, nil, nil, nil, nil, nil, nil, nil, nil, nil); err != nil {
			return err
		}
	}
	krows := make([]krow, 0, n)
	// Rows are written in start order within each table, as nsys does, by
	// always advancing the process whose CPU clock is furthest behind.
	for i := 0; i < n; i++ {
		pr := ps[0]
		for _, q := range ps[1:] {
			if q.clock < pr.clock {
				pr = q
			}
		}
		p := int(pr.pid - 4000)
		// NVTX step and layer ranges, closed when the next one opens.
		if pr.kernels%2000 == 0 {
			if pr.step >= 0 {
				if err := nvtx.add(pr.step, pr.clock, 59, nil, nil, nil, fmt.Sprintf("decode_step#%d", pr.kernels/2000), pr.gtid, nil, nil, 0, nil, nil, nil, nil, nil, nil, nil, nil, nil); err != nil {
					return err
				}
			}
			pr.step = pr.clock
		}
		if pr.kernels%40 == 0 {
			if pr.layer >= 0 {
				if err := nvtx.add(pr.layer, pr.clock, 59, nil, nil, nil, fmt.Sprintf("model.layers.%d", (pr.kernels/40)%32), pr.gtid, nil, nil, 0, nil, nil, nil, nil, nil, nil, nil, nil, nil); err != nil {
					return err
				}
			}
			pr.layer = pr.clock
		}
		// A call that launches nothing, every few kernels.
		if i%4 == 0 {
			pr.corr++
			api := apis["cudaStreamIsCapturing_v10000"]
			if i%8 == 0 {
				api = apis["cudaGetDevice_v3020"]
			}
			if err := rt.add(pr.clock, pr.clock+400, 1, pr.gtid, pr.corr, api, 0, nil); err != nil {
				return err
			}
			pr.clock += 600
		}
		k := names[zipf.Uint64()]
		pr.corr++
		launch := pr.clock
		api := apis["cudaLaunchKernel_v7000"]
		if k.nccl {
			api = apis["cuLaunchKernelEx"]
			if err := nvtx.add(launch-300, launch+2500, 59, nil, nil, nil, nil, pr.gtid, nil, ncclCalls[0], 1, nil, nil, nil, nil, nil, nil, nil, nil, nil); err != nil {
				return err
			}
		}
		if err := rt.add(launch, launch+2200+int64(r.Intn(800)), 1, pr.gtid, pr.corr, api, 0, nil); err != nil {
			return err
		}
		s := 0
		if k.nccl {
			s = 1
		}
		start := max(pr.gpu[s], launch+4000)
		dur := k.dur/2 + int64(r.Intn(int(k.dur)))
		pr.gpu[s] = start + dur + 800
		stream := int64(7)
		if s == 1 {
			stream = 20 + int64(p)
		}
		krows = append(krows, krow{start: start, dur: dur, dev: int32(p), stream: int32(stream), corr: pr.corr, gpid: pr.gpid, name: k,
			regs: k.regs, grid: k.grids[r.Intn(len(k.grids))], smem: k.smem, gridID: int64(i) + 1000})
		pr.clock = launch + 3000 + int64(r.Intn(3000))
		// Keep the CPU at most ~1 ms ahead of the GPU, like a real queue.
		if pr.gpu[0]-pr.clock > 1_000_000 {
			pr.clock = pr.gpu[0] - 1_000_000
		}
		pr.kernels++
		if pr.kernels%5000 == 0 {
			pr.corr++
			if err := rt.add(pr.clock, pr.clock+9000, 1, pr.gtid, pr.corr, apis["cudaMemcpyAsync_v3020"], 0, nil); err != nil {
				return err
			}
			ms := max(pr.gpu[0], pr.clock+3000)
			if err := mc.add(ms, ms+6000, p, 1, 0, 7, pr.corr, pr.gpid, 1<<20, 1+r.Intn(2), nil, 2, 1, p, 1, p, 1, 0, nil, nil, 1); err != nil {
				return err
			}
			pr.gpu[0] = ms + 6800
			pr.clock += 10000
		}
		if pr.kernels%20000 == 0 {
			pr.corr++
			if err := rt.add(pr.clock, pr.clock+3000, 1, pr.gtid, pr.corr, apis["cudaMemsetAsync_v3020"], 0, nil); err != nil {
				return err
			}
			st := max(pr.gpu[0], pr.clock+3000)
			if err := ms.add(st, st+1500, p, 1, 0, 7, pr.corr, pr.gpid, 0, 4096, nil, 1); err != nil {
				return err
			}
			pr.gpu[0] = st + 2000
			pr.clock += 4000
		}
	}
	// nsys writes each table in start order; GPU start order differs from
	// launch order across processes and streams, so sort before writing.
	slices.SortStableFunc(krows, func(a, b krow) int { return cmp.Compare(a.start, b.start) })
	for _, k := range krows {
		if err := kern.add(k.start, k.start+k.dur, k.dev, 1, 0, k.stream, k.corr, k.gpid, k.name.demangled, k.name.short, k.name.mangled, 1, 0,
			k.regs, k.grid, 1, 1, 128, 1, 1, 0, k.smem, 0, 0, k.gridID, 0, nil, 1,
			nil, nil, nil, nil, 0, 0, 0, 0, 1, 0, 0, "[]"); err != nil {
			return err
		}
	}
	for _, b := range []*batch{strs, meta, enum, procs, gpus, kern, rt, mc, ms, nvtx} {
		if err := b.flush(); err != nil {
			return fmt.Errorf("%s: %w", b.table, err)
		}
	}
	var end int64
	for _, pr := range ps {
		end = max(end, pr.gpu[0], pr.gpu[1], pr.clock)
	}
	if _, err := tx.Exec("INSERT INTO ANALYSIS_DETAILS VALUES (?, ?, ?, ?)", vm, end-t0, t0, end); err != nil {
		return err
	}
	return tx.Commit()
}
