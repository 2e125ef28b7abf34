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
go build -o /tmp/traceq-nsys-load ./bench/nsys/load
HAVE_CLI=0
if [ -d cmd/traceq ] && go build -o /tmp/traceq ./cmd/traceq 2>/dev/null &&
	/tmp/traceq breakdown --help >/dev/null 2>&1; then
	HAVE_CLI=1
fi

SQL="SELECT s.value, count(*), sum(k.end-k.start), min(k.end-k.start), max(k.end-k.start)
  FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id=k.demangledName GROUP BY 1;
SELECT deviceId, count(*), sum(end-start) FROM CUPTI_ACTIVITY_KIND_KERNEL GROUP BY 1;"

# Both sides read from the page cache, not the disk.
cat "$DB" >/dev/null

# best CMD...: the lowest wall time of $RUNS runs, and the peak RSS of that
# run, as "seconds kilobytes".
best() {
	local best_s="" best_kb=""
	for _ in $(seq "$RUNS"); do
		/usr/bin/time -f "%e %M" -o "$OUT/time.txt" "$@" >/dev/null
		read -r s kb <"$OUT/time.txt"
		if [ -z "$best_s" ] || awk "BEGIN{exit !($s < $best_s)}"; then
			best_s=$s best_kb=$kb
		fi
	done
	echo "$best_s $best_kb"
}

read -r ld_s ld_kb < <(best /tmp/traceq-nsys-load "$DB")
if [ "$HAVE_CLI" = 1 ]; then
	read -r tq_s tq_kb < <(best /tmp/traceq breakdown --format json "$DB")
fi
read -r sq_s sq_kb < <(best sqlite3 "$DB" "$SQL")

row() { # label seconds kilobytes
	awk -v l="$1" -v s="$2" -v kb="$3" -v b="$sq_s" 'BEGIN { printf "%-42s %9.2f %14d %8.2fx\n", l, s, kb / 1024, s / b }'
}
printf "nsys export: %s (%s kernels, %d MB), best of %s runs\n" "$DB" "$N" $(($(stat -L -c %s "$DB") / 1048576)) "$RUNS"
printf "%-42s %9s %14s %9s\n" "" "wall (s)" "peak RSS (MB)" "vs sqlite3"
[ "$HAVE_CLI" = 1 ] && row "traceq breakdown --format json FILE" "$tq_s" "$tq_kb"
row "nsyssqlite.Open (bench/nsys/load FILE)" "$ld_s" "$ld_kb"
row "sqlite3 FILE (per-name + per-device SQL)" "$sq_s" "$sq_kb"
