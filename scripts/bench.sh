#!/usr/bin/env bash
# `npm run bench [section ...] [--json]`: starts the whole service on free ports with throwaway data,
# then runs bench/index.ts (every section, or those named) against it on loopback. Not part of
# `npm test`. --json also records each section's result in bench/results/<section>/ (bench/results.ts).
#
# BENCH_TEMPORAL=dev (default) runs it on the Temporal dev server; cluster on the real Temporal
# server (scripts/temporal-cluster.sh: frontend, history, matching and worker services on the
# run's PostgreSQL, mutual TLS); both runs the sections on the dev server, then on a fresh stack on
# the cluster (same machine, same run) and prints the two side by side (bench/compare.ts).
# BENCH_WORKERS=N (default 1) starts N worker processes on the task queue (the webhooks section
# runs its delivery worker in the bench process, and N-1 more worker processes on its queue).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
LOG_TAG=bench
RUN="$(mktemp -d "${TMPDIR:-/tmp}/payments-bench.XXXXXX")"
# `|| true`: under set -e a cp that finds no log at one of its globs would make a good run exit 1.
trap 'stop_all; cp "$RUN"/*.log "$RUN"/*/*.log "${TMPDIR:-/tmp}/" 2>/dev/null || true; rm -rf "$RUN"' EXIT
trap 'exit 130' INT TERM

BENCH_TEMPORAL="${BENCH_TEMPORAL:-dev}"
export BENCH_WORKERS="${BENCH_WORKERS:-1}"
case "$BENCH_TEMPORAL" in dev|cluster) MODES=("$BENCH_TEMPORAL") ;; both) MODES=(dev cluster) ;;
  *) log "BENCH_TEMPORAL must be dev, cluster or both (got '$BENCH_TEMPORAL')"; exit 2 ;; esac
[[ "$BENCH_WORKERS" =~ ^[1-9][0-9]*$ ]] || { log "BENCH_WORKERS must be a number from 1 (got '$BENCH_WORKERS')"; exit 2; }

ensure_node_modules
ensure_tools all
[[ "${EMBEDDED_DB:-postgresql}" == sqlite && "$BENCH_TEMPORAL" == dev ]] || ensure_postgres
source "$ROOT/scripts/temporal-cluster.sh"

# One stack (database, Temporal of <mode>, workers, API) in <dir>, the bench against it (its
# output also in <dir>/bench.out), then everything stopped.
bench_on() { # mode dir bench-args...
  local mode=$1 dir=$2; shift 2
  mkdir -p "$dir"
  MONGO_PORT="$(free_port)"
  start_embedded_db "$MONGO_PORT" "$dir" "$dir"
  TEMPORAL_PORT="$(free_port)"
  unset TEMPORAL_TLS_CERT TEMPORAL_TLS_KEY TEMPORAL_TLS_CA TEMPORAL_TLS_SERVER_NAME
  if [[ "$mode" == cluster ]]; then
    # EMBEDDED_DB=sqlite starts no PostgreSQL; the cluster needs one.
    [[ -n "${PG_PID:-}" ]] || start_postgres "$dir/postgres" "$dir/postgres.log"
    log "starting the Temporal server (frontend, history, matching, worker; mutual TLS) on 127.0.0.1:$TEMPORAL_PORT"
    start_temporal_cluster "$TEMPORAL_PORT" 0 "$dir/temporal-cluster" "$dir"
    export BENCH_TEMPORAL_LABEL="Temporal cluster (4 services, mutual TLS)"
  else
    start_temporal_dev "$TEMPORAL_PORT" 0 "$dir/temporal.db" "$dir/temporal.log" --headless
    export BENCH_TEMPORAL_LABEL="Temporal dev server"
  fi

  export MONGODB_URI="mongodb://127.0.0.1:$MONGO_PORT/bench"
  export TEMPORAL_ADDRESS="127.0.0.1:$TEMPORAL_PORT"
  export PORT="$(free_port)"
  export LOG_LEVEL=warn
  export RATE_LIMIT_PER_MINUTE=1000000
  export PUBLIC_RATE_LIMIT_PER_MINUTE=1000000
  export WEBHOOK_ALLOW_PRIVATE_NETWORKS=true
  # The worker takes WEBHOOK_ALLOW_PRIVATE_NETWORKS only with this (its HOST binds only its metrics).
  export ALLOW_UNSAFE_LOCAL_SETTINGS=true
  export BENCH_RUN_DIR="$dir"
  # bench/cpu.ts counts the CPU of every process under this script (and of the bench itself).
  export BENCH_STACK_PID=$$
  # Several workers: each on a free metrics port.
  if (( BENCH_WORKERS > 1 )); then export WORKER_METRICS_PORT=0 TEMPORAL_METRICS_PORT=0; fi

  # The detection section watches a local Ethereum chain; other sections run without one.
  local named=() arg
  for arg in "$@"; do [[ "$arg" == --* ]] || named+=("$arg"); done
  if [[ ${#named[@]} -eq 0 || " ${named[*]} " == *" detection "* ]]; then
    start_dev_chain "$(free_port)" "$dir/ganache.log"
  fi
  export ETH_CONFIRMATIONS="${BENCH_ETH_CONFIRMATIONS:-12}"
  export ETH_POLL_SECONDS="${BENCH_ETH_POLL_SECONDS:-1}"

  # BENCH_WORKER_NODE_ARGS: node flags for the worker processes (e.g. --cpu-prof --cpu-prof-dir=/tmp/wprof).
  local i
  for ((i = 1; i <= BENCH_WORKERS; i++)); do
    # shellcheck disable=SC2086
    start_bg "$dir/worker$( ((i > 1)) && echo "$i").log" node ${BENCH_WORKER_NODE_ARGS:-} --import tsx "$ROOT/worker.ts" >/dev/null
    # The first one's peak memory is the renewals section's figure.
    (( i > 1 )) || export BENCH_WORKER_PID="${PIDS[-1]}"
  done
  # BENCH_API_NODE_ARGS: node flags for the API process (e.g. --cpu-prof --cpu-prof-dir=/tmp/aprof).
  # shellcheck disable=SC2086
  start_bg "$dir/api.log" node ${BENCH_API_NODE_ARGS:-} --import tsx "$ROOT/src/api/server.ts" >/dev/null
  wait_for_http "http://127.0.0.1:$PORT/readyz" api 120 || { tail -n 25 "$dir"/api.log "$dir"/worker*.log >&2; return 1; }

  log "bench on the $BENCH_TEMPORAL_LABEL, $BENCH_WORKERS worker process(es)"
  # BENCH_NODE_ARGS: extra node flags for the bench process, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  local status=0
  # shellcheck disable=SC2086
  (cd "$ROOT" && node ${BENCH_NODE_ARGS:-} --import tsx bench/index.ts "$@") | tee "$dir/bench.out" || status=$?
  stop_all
  return "$status"
}

for mode in "${MODES[@]}"; do
  bench_on "$mode" "$RUN/$mode" "$@"
done
if (( ${#MODES[@]} > 1 )); then
  cd "$ROOT"
  node --import tsx bench/compare.ts "dev=$RUN/dev/bench.out" "cluster=$RUN/cluster/bench.out"
fi
