#!/usr/bin/env bash
# `npm run bench`: starts the whole service on free ports with throwaway data, then runs
# bench/index.ts against it on loopback. Not part of `npm test`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
LOG_TAG=bench
RUN="$(mktemp -d "${TMPDIR:-/tmp}/payments-bench.XXXXXX")"
trap 'stop_all; cp "$RUN"/*.log "${TMPDIR:-/tmp}/" 2>/dev/null; rm -rf "$RUN"' EXIT
trap 'exit 130' INT TERM

ensure_node_modules
ensure_tools all

MONGO_PORT="$(free_port)"
[[ "${EMBEDDED_DB:-postgresql}" == sqlite ]] || ensure_postgres
start_embedded_db "$MONGO_PORT" "$RUN" "$RUN"
TEMPORAL_PORT="$(free_port)"
start_temporal_dev "$TEMPORAL_PORT" 0 "$RUN/temporal.db" "$RUN/temporal.log" --headless

export MONGODB_URI="mongodb://127.0.0.1:$MONGO_PORT/bench"
export TEMPORAL_ADDRESS="127.0.0.1:$TEMPORAL_PORT"
export PORT="$(free_port)"
export LOG_LEVEL=warn
export RATE_LIMIT_PER_MINUTE=1000000
export WEBHOOK_ALLOW_PRIVATE_NETWORKS=true
# The worker takes WEBHOOK_ALLOW_PRIVATE_NETWORKS only with this (its HOST binds only its metrics).
export ALLOW_UNSAFE_LOCAL_SETTINGS=true
export BENCH_RUN_DIR="$RUN"
# bench/cpu.ts counts the CPU of every process under this script (and of the bench itself).
export BENCH_STACK_PID=$$

# The detection section watches a local Ethereum chain; other sections run without one.
if [[ $# -eq 0 || "${1:-}" == "detection" ]]; then
  start_dev_chain "$(free_port)" "$RUN/ganache.log"
fi
export ETH_CONFIRMATIONS="${BENCH_ETH_CONFIRMATIONS:-12}"
export ETH_POLL_SECONDS="${BENCH_ETH_POLL_SECONDS:-1}"

# BENCH_WORKER_NODE_ARGS: node flags for the worker process (e.g. --cpu-prof --cpu-prof-dir=/tmp/wprof).
# shellcheck disable=SC2086
start_bg "$RUN/worker.log" node ${BENCH_WORKER_NODE_ARGS:-} --import tsx "$ROOT/worker.ts" >/dev/null
export BENCH_WORKER_PID="${PIDS[-1]}"
# BENCH_API_NODE_ARGS: node flags for the API process (e.g. --cpu-prof --cpu-prof-dir=/tmp/aprof).
# shellcheck disable=SC2086
start_bg "$RUN/api.log" node ${BENCH_API_NODE_ARGS:-} --import tsx "$ROOT/src/api/server.ts" >/dev/null
wait_for_http "http://127.0.0.1:$PORT/readyz" api 120 || { tail -n 25 "$RUN"/api.log "$RUN"/worker.log >&2; exit 1; }

cd "$ROOT"
# BENCH_NODE_ARGS: extra node flags for the bench process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
# shellcheck disable=SC2086
node ${BENCH_NODE_ARGS:-} --import tsx bench/index.ts "$@"
