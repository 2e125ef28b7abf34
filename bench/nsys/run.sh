#!/usr/bin/env bash
# bench/nsys/run.sh: time traceq reading a synthetic nsys SQLite export with
# N kernels against the sqlite3 CLI running the equivalent aggregate
# (per-kernel-name count/sum/min/max plus the per-device sum), and print
# wall time, peak RSS and the ratio side by side.
#
#   bench/nsys/run.sh                 # N=5000000, best of 3 runs each
#   N=200000 RUNS=1 bench/nsys/run.sh
#
# The export is generated once (bench/nsys/gen.go) and kept in $OUT.
# It times `traceq breakdown --format json FILE` when cmd/traceq builds and
# has that subcommand, and otherwise bench/nsys/load (nsyssqlite.Open only).
set -euo pipefail
cd "$(dirname "$0")/../.."

N=${N:-5000000}
RUNS=${RUNS:-3}
OUT=${OUT:-/tmp/traceq-bench-nsys}
DB="$OUT/nsys-$N.sqlite"
mkdir -p "$OUT"

need() { command -v "$1" >/dev/null 2>&1 || { echo "installing $2" >&2; apt-get install -y "$2" >/dev/null; }; }
need sqlite3 sqlite3
[ -x /usr/bin/time ] || { echo "installing time" >&2; apt-get install -y time >/dev/null; }

if [ ! -f "$DB" ]; then
	echo "generating $DB ($N kernels)" >&2
	go run ./bench/nsys -n "$N" -o "$DB.tmp"
	mv "$DB.tmp" "$DB"
fi

# nsyssqlite.Open alone, always; the CLI too when it builds and has the
# breakdown subcommand (it adds classification and aggregation).
# The binaries go into $OUT, beside the export, where no other bench
# script writes.
go build -o "$OUT/traceq-nsys-load" ./bench/nsys/load
HAVE_CLI=0
if [ -d cmd/traceq ] && go build -o "$OUT/traceq" ./cmd/traceq 2>/dev/null &&
	"$OUT/traceq" breakdown --help >/dev/null 2>&1; then
	HAVE_CLI=1
fi

SQL="SELECT s.value, count(*), sum(k.end-k.start), min(k.end-k.start), max(k.end-k.start)
  FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id=k.demangledName GROUP BY 1;
SELECT deviceId, count(*), sum(end-start) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1;"

# Both sides read from the page cache, not the disk.
cat "$DB" >/dev/null

# best CMD...: of $RUNS runs, the one with the lowest wall time, as
# "wall-seconds cpu-seconds peak-RSS-kilobytes". CPU time (user+sys) is
# printed too because wall time is unreliable on a shared machine.
best() {
	local best_s="" best_cpu="" best_kb=""
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%e %U %S %M" -o "$OUT/time.txt" "$@" >/dev/null 2>"$OUT/stderr.txt" || {
			cat "$OUT/stderr.txt" >&2
			exit 1
		}
		read -r s u sy kb <"$OUT/time.txt"
		if [ -z "$best_s" ] || awk "BEGIN{exit !($s < $best_s)}"; then
			best_s=$s best_cpu=$(awk "BEGIN{print $u + $sy}") best_kb=$kb
		fi
	done
	echo "$best_s $best_cpu $best_kb"
}

read -r ld_s ld_cpu ld_kb < <(best "$OUT/traceq-nsys-load" "$DB")
if [ "$HAVE_CLI" = 1 ]; then
	read -r tq_s tq_cpu tq_kb < <(best "$OUT/traceq" breakdown --format json "$DB")
fi
read -r sq_s sq_cpu sq_kb < <(best sqlite3 "$DB" "$SQL")

row() { # label wall-seconds cpu-seconds kilobytes
	awk -v l="$1" -v s="$2" -v c="$3" -v kb="$4" -v b="$sq_s" -v bc="$sq_cpu" \
		'BEGIN { printf "%-42s %8.2f %8.2f %13d %8.2fx %8.2fx\n", l, s, c, kb / 1024, s / b, c / bc }'
}
printf "nsys export: %s (%s kernels, %d MB), best of %s runs\n" "$DB" "$N" $(($(stat -L -c %s "$DB") / 1048576)) "$RUNS"
printf "%-42s %8s %8s %13s %9s %9s\n" "" "wall (s)" "cpu (s)" "peak RSS (MB)" "wall/sql" "cpu/sql"
if [ "$HAVE_CLI" = 1 ]; then row "traceq breakdown --format json FILE" "$tq_s" "$tq_cpu" "$tq_kb"; fi
row "nsyssqlite.Open (bench/nsys/load FILE)" "$ld_s" "$ld_cpu" "$ld_kb"
row "sqlite3 FILE (per-name + per-device SQL)" "$sq_s" "$sq_cpu" "$sq_kb"
