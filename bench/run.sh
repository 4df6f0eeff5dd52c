#!/usr/bin/env bash
# npm run bench: gw against the direct call and Portkey (../shared/peerbench), then the extra
# scenarios (embeddings, cache hit, guardrail, 2,000 req/s, Postgres + Redis), then
# docs/benchmarks.md. Everything listens on 127.0.0.1, every load is bounded in time, and every
# process is stopped by its PID.
#
#   npm run bench                    # full run (~20 min)
#   BENCH_QUICK=1 npm run bench      # smoke run: 1 round, 5 s per measurement
#   BENCH_SKIP_PEERBENCH=1 / BENCH_SKIP_SCENARIOS=1 / BENCH_SKIP_BUILD=1 / BENCH_MODES=sqlite
#   BENCH_SOAK_S=600                 # adds a 10-minute soak at 500 req/s (RSS sampled)
#   BENCH_PROFILE=1                  # adds a --cpu-prof / --trace-gc run of the gateway (bench/profile.mjs)
#   QUIET_BUSY=0.1 QUIET_MAX_S=15    # each scenario measurement waits for < 10% of all CPUs busy (at most 15 s)
# peerbench's own settings (REPEATS, DUR, STREAM_DUR, RATES, CONNS, PIN, GW_CPUS, LOAD_CPUS, ...) apply to both parts.
set -euo pipefail

ROOT=$(git -C "$(dirname "${BASH_SOURCE[0]}")" rev-parse --show-toplevel 2>/dev/null || (cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd))
PEER=$(cd "$ROOT/.." && pwd)/shared/peerbench
if [ ! -f "$PEER/run.sh" ]; then
  echo "bench: peerbench not found at $PEER (expected ../shared/peerbench next to the repository)" >&2
  exit 2
fi
cd "$ROOT"

if [ "${BENCH_QUICK:-0}" = 1 ]; then
  export REPEATS=${REPEATS:-1} DUR=${DUR:-5} STREAM_DUR=${STREAM_DUR:-3} WARMUP=${WARMUP:-2} CAL_DUR=${CAL_DUR:-2}
fi
export MOCK_PORT=${MOCK_PORT:-18080}
STAMP=$(date -u +%Y%m%d-%H%M%S)
RESULTS="$ROOT/bench/results/$STAMP"
mkdir -p "$RESULTS"
# The source measured is the one built now; the report names it even if the tree changes during the run.
{ git rev-parse --short HEAD 2>/dev/null || echo unknown; if [ -n "$(git status --porcelain -- src 2>/dev/null)" ]; then echo dirty; fi; } >"$RESULTS/source.txt"
log() { printf '[bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

if [ "${BENCH_SKIP_BUILD:-0}" != 1 ]; then
  log "building (npm run build)"
  if ! npm run build >"$RESULTS/build.log" 2>&1; then
    if [ -f dist/src/main.js ] && [ -f dist/server/main.js ]; then
      log "WARNING: npm run build reported errors (see $RESULTS/build.log); using the emitted dist/"
    else
      log "build failed: $(tail -n 20 "$RESULTS/build.log")"; exit 1
    fi
  fi
fi
# bin/gw-server runs the server bundle (dist/server/); the tools prepare data with dist/src/.
for built in dist/src/main.js dist/server/main.js; do
  [ -f "$built" ] || { log "$built missing: run npm run build"; exit 1; }
done

log "preparing the gateway's data dir in $RESULTS"
node bench/prepare.mjs --results "$RESULTS" --upstream "http://127.0.0.1:$MOCK_PORT/v1" --root "$ROOT"
# shellcheck disable=SC1091
source "$RESULTS/gw.env"

{
  echo "# $(date -u +%FT%TZ) in $ROOT"
  echo "BENCH_QUICK=${BENCH_QUICK:-0} REPEATS=${REPEATS:-3} BENCH_REPEATS=${BENCH_REPEATS:-${REPEATS:-3}} DUR=${DUR:-8} STREAM_DUR=${STREAM_DUR:-6} BENCH_MODES=\"${BENCH_MODES:-sqlite postgres}\" BENCH_PROFILE=${BENCH_PROFILE:-0} BENCH_SOAK_S=${BENCH_SOAK_S:-0} npm run bench"
  echo "node bench/prepare.mjs --results bench/results/$STAMP --upstream http://127.0.0.1:$MOCK_PORT/v1 --root ."
  echo "GW_NAME=gw GW_CMD='exec bin/gw-server' GW_HEADERS='Authorization: Bearer <bench key>' bash ../shared/peerbench/run.sh"
  echo "node bench/run-scenarios.mjs --results bench/results/$STAMP --peer ../shared/peerbench --root ."
  if [ "${BENCH_PROFILE:-0}" = 1 ]; then echo "node bench/profile.mjs --results bench/results/$STAMP --peer ../shared/peerbench --root ."; fi
  echo "node bench/report.mjs --results bench/results/$STAMP --root ."
} >"$RESULTS/commands.txt"

PEER_RC=0
if [ "${BENCH_SKIP_PEERBENCH:-0}" != 1 ]; then
  log "peerbench: direct, Portkey and gw (GW_CMD), interleaved"
  # The machine's CPU counters before and after, for the time the hypervisor took meanwhile (the report's steal figure).
  head -n 1 /proc/stat >"$RESULTS/peerbench-stat.txt"
  GW_NAME=gw GW_CMD='exec bin/gw-server' GW_HEADERS="Authorization: Bearer $BENCH_API_KEY" \
    OUT_JSON="$RESULTS/peerbench.json" RUN_DIR="$RESULTS/peerbench" \
    bash "$PEER/run.sh" || PEER_RC=$?
  head -n 1 /proc/stat >>"$RESULTS/peerbench-stat.txt"
  [ "$PEER_RC" = 0 ] || log "WARNING: peerbench exited with $PEER_RC (3 = some answers were not 2xx/the mock's)"
  # 3 only means some target had bad answers. When only the peer did (Portkey overloaded on a slow
  # host), its figures are marked INVALID in the report, and the run itself has not failed.
  if [ "$PEER_RC" = 3 ] && node -e '
    const { targets } = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    process.exit(targets.gw?.errors_total === 0 && targets.direct?.errors_total === 0 ? 0 : 1);
  ' "$RESULTS/peerbench.json" 2>/dev/null; then
    log "only the peer had bad answers: gw and the direct call had none"
    PEER_RC=0
  fi
fi

SCEN_RC=0
if [ "${BENCH_SKIP_SCENARIOS:-0}" != 1 ]; then
  log "extra scenarios"
  node bench/run-scenarios.mjs --results "$RESULTS" --peer "$PEER" --root "$ROOT" || SCEN_RC=$?
fi

if [ "${BENCH_PROFILE:-0}" = 1 ]; then
  log "profiling the request path (--cpu-prof, --trace-gc)"
  node bench/profile.mjs --results "$RESULTS" --peer "$PEER" --root "$ROOT" || log "WARNING: profiling failed"
fi

node bench/report.mjs --results "$RESULTS" --root "$ROOT"
log "results in $RESULTS; report in docs/benchmarks.md"
if [ "$PEER_RC" != 0 ] || [ "$SCEN_RC" != 0 ]; then exit 1; fi
