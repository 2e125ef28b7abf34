#!/usr/bin/env bash
# Compares traceq at another revision with this tree on the scale
# benchmark's generated traces (bench/run.sh makes them in $DIR), in one
# run, the two binaries alternating so that load from neighbours weighs on
# both alike. Prints wall and CPU seconds and peak RSS for each, and the
# ratios new / old: "no worse" is CPU ratios near or under 1.
#
#   bench/compare.sh REV          # e.g. bench/compare.sh 022e57e
#   REPS=3 bench/compare.sh REV   # more repetitions (default 2)
set -euo pipefail
cd "$(dirname "$0")/.."
REV=${1:?usage: bench/compare.sh REV}
DIR=${DIR:-/tmp/traceq-bench}
REPS=${REPS:-2}
ONE="$DIR/one/rank0.json"
[ -f "$ONE" ] && [ -f "$ONE.gz" ] && [ -d "$DIR/ranks" ] || { echo "run bench/run.sh first: no traces in $DIR" >&2; exit 1; }
if [ ! -x /usr/bin/time ]; then apt-get install -y time >/dev/null; fi

old=$(mktemp -d)
trap 'git worktree remove --force "$old/src" >/dev/null 2>&1 || true; rm -rf "$old"' EXIT
git worktree add -q --detach "$old/src" "$REV"
(cd "$old/src" && go build -o "$old/traceq" ./cmd/traceq)
go build -o "$DIR/traceq-new" ./cmd/traceq

# run BIN ARGS...: prints "wall cpu rssMiB" of one run, stdout discarded.
run() {
	/usr/bin/time -f "%e %U %S %M" -o "$DIR/cmp.out" "$@" >/dev/null 2>&1
	awk '{printf "%.2f %.2f %.0f\n", $1, $2+$3, $4/1024}' "$DIR/cmp.out"
}

echo "old: $REV  new: $(git rev-parse --short HEAD)$(git diff --quiet || echo +dirty)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-34s %18s %18s %13s\n' case "old wall/cpu/MiB" "new wall/cpu/MiB" "cpu new/old"
compare() {
	local name=$1
	shift
	local ow=0 oc=0 om=0 nw=0 nc=0 nm=0 r
	for _ in $(seq "$REPS"); do
		r=$(run "$old/traceq" "$@")
		read -r w c m <<<"$r"; ow=$(awk "BEGIN{print $ow+$w}"); oc=$(awk "BEGIN{print $oc+$c}"); om=$((m > om ? m : om))
		r=$(run "$DIR/traceq-new" "$@")
		read -r w c m <<<"$r"; nw=$(awk "BEGIN{print $nw+$w}"); nc=$(awk "BEGIN{print $nc+$c}"); nm=$((m > nm ? m : nm))
	done
	printf '%-34s %6.2f %5.2f %5d %6.2f %5.2f %5d %13.2f\n' "$name" \
		"$(awk "BEGIN{print $ow/$REPS}")" "$(awk "BEGIN{print $oc/$REPS}")" "$om" \
		"$(awk "BEGIN{print $nw/$REPS}")" "$(awk "BEGIN{print $nc/$REPS}")" "$nm" "$(awk "BEGIN{print $nc/$oc}")"
}
compare "breakdown one.json.gz" breakdown --format json "$ONE.gz"
compare "breakdown one.json" breakdown --format json "$ONE"
compare "breakdown 8 rank files" breakdown --format json "$DIR"/ranks/rank*.json.gz
compare "steps one.json.gz" steps --format json "$ONE.gz"
compare "slice --steps 100:102 one.json.gz" slice --steps 100:102 -o "$DIR/cmp-slice.json" "$ONE.gz"
