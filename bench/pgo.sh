#!/usr/bin/env bash
# Regenerates cmd/traceq/default.pgo, the CPU profile that `go build` and
# `go install` of traceq optimise with (profile-guided optimisation: the
# calls the profile shows hot are inlined past the usual budget; the
# decoder's per-key calls are most of it, docs/performance.md). The profile
# is of bench/prof, built without one, reading bench/run.sh's generated
# traces (plain, gzip, 8 ranks, shapes, a merge), every real trace under
# ../shared/traces when it is there, and the nsys export of
# bench/nsys/run.sh when it is there. Re-run it when the parser or the
# window table change much; the build stays correct with a stale profile,
# only less fast.
#
#   bench/pgo.sh                 # after bench/run.sh (and bench/nsys/run.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
DIR=${DIR:-/tmp/traceq-bench}
NSYS=${NSYS:-/tmp/traceq-bench-nsys/nsys-5000000.sqlite}
[ -f "$DIR/one/rank0.json" ] && [ -d "$DIR/ranks" ] && [ -f "$DIR/shaped/rank0.json.gz" ] ||
	{ echo "run bench/run.sh first: no traces in $DIR" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -pgo=off -o "$tmp/prof" ./bench/prof
prof() {
	local name=$1
	shift
	echo "profiling $name" >&2
	"$tmp/prof" -cpuprofile "$tmp/$name.prof" "$@" >/dev/null 2>"$tmp/$name.err" ||
		{ cat "$tmp/$name.err" >&2; exit 1; }
}
prof json "$DIR/one/rank0.json"
prof gz "$DIR/one/rank0.json.gz"
prof ranks "$DIR"/ranks/*.json.gz
prof shaped "$DIR/shaped/rank0.json.gz"
prof merge -merge-steps 10:20 "$DIR"/ranks/*.json.gz
if [ -d ../shared/traces/torch ]; then
	n=0
	while IFS= read -r f; do
		n=$((n + 1))
		# Each read 20 times, so that real traces (a few MB each) weigh
		# in the profile about as much as the generated ones. Files it
		# refuses (no GPU activity, not a trace) are left out.
		"$tmp/prof" -repeat 20 -cpuprofile "$tmp/real$n.prof" "$f" >/dev/null 2>&1 || rm -f "$tmp/real$n.prof"
	done < <(find ../shared/traces/torch ../shared/traces/nsys -type f \( -name '*.json*' -o -name '*.sqlite' \) | sort)
	echo "profiled $(ls "$tmp"/real*.prof 2>/dev/null | wc -l) real traces" >&2
fi
if [ -f "$NSYS" ]; then
	prof nsys "$NSYS"
fi
go tool pprof -proto "$tmp"/*.prof >"$tmp/default.pgo" 2>/dev/null
mv "$tmp/default.pgo" cmd/traceq/default.pgo
ls -l cmd/traceq/default.pgo >&2
