#!/usr/bin/env bash
# `npm test`: installs whatever is missing, starts a throwaway FerretDB (on PostgreSQL, or on
# SQLite with EMBEDDED_DB=sqlite) and a headless Temporal dev server on free ports, runs every
# Jest test (time-skipping tests start the Temporal test server themselves), then the cluster job
# (test/cluster against the real Temporal server with mutual TLS), then stops what it started.
# Extra args go to Jest.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
LOG_TAG=test
# What a partial run left out is said again at the end, just above the summary line.
print_test_summary() { echo; [[ -s "$RUN/skipped" ]] && cat "$RUN/skipped"; [[ -s "$RUN/summary" ]] && cat "$RUN/summary"; true; }
skipped() { log "SKIPPED: $*"; echo "skipped: $*" >> "$RUN/skipped"; }
RUN="$(mktemp -d "${TMPDIR:-/tmp}/payments-test.XXXXXX")"
# The summary line goes last, after the servers stop, so it closes the output CI reads.
trap 'stop_all; print_test_summary; rm -rf "$RUN"' EXIT
trap 'exit 130' INT TERM

ensure_node_modules
ensure_tools all
ensure_compose
ensure_chromium
ensure_promtool
ensure_poppler
export CHROMIUM_PATH="${CHROMIUM_PATH:-$(command -v chromium)}"

# SKIP_TYPECHECK=1 skips both static checks (while iterating on a few test files); said in the output.
if [[ -z "${SKIP_TYPECHECK:-}" ]]; then
  log "type-checking"
  (cd "$ROOT" && npx tsc --noEmit)
  log "linting (import cycles and layer rules, eslint.config.js)"
  (cd "$ROOT" && npx eslint .)
  # ESLint's import/no-cycle skips type-only imports; madge counts them.
  log "import cycles, type-only imports included (madge)"
  (cd "$ROOT" && npx madge --circular --no-spinner --extensions ts,tsx src worker.ts)
else
  skipped "type-checking and linting (SKIP_TYPECHECK is set)"
fi

MONGO_PORT="$(free_port)"
[[ "${EMBEDDED_DB:-postgresql}" == sqlite ]] || ensure_postgres
log "starting ${EMBEDDED_DB:-postgresql} and FerretDB on 127.0.0.1:$MONGO_PORT (data in $RUN)"
# Throwaway data: PostgreSQL runs without fsync here (PG_NO_SYNC), unlike npm start and bench.
PG_NO_SYNC=1 start_embedded_db "$MONGO_PORT" "$RUN" "$RUN"
TEMPORAL_PORT="$(free_port)"
log "starting Temporal dev server on 127.0.0.1:$TEMPORAL_PORT"
start_temporal_dev "$TEMPORAL_PORT" 0 "$RUN/temporal.db" "$RUN/temporal.log" --headless

ensure_redis
REDIS_PORT="$(free_port)"
log "starting Redis on 127.0.0.1:$REDIS_PORT"
start_redis "$REDIS_PORT" "$RUN/redis" "$RUN/redis.log"
export TEST_REDIS_URL="redis://127.0.0.1:$REDIS_PORT"

export TEST_MONGODB_URL="mongodb://127.0.0.1:$MONGO_PORT"
export TEST_TEMPORAL_ADDRESS="127.0.0.1:$TEMPORAL_PORT"
# FerretDB's PostgreSQL (test/db/ferretdbIndexes.test.ts reads its catalog; PG_SOCKET_DIR comes
# from start_postgres).
# With EMBEDDED_DB=sqlite jest.config.js leaves that file out.
if [[ "${EMBEDDED_DB:-postgresql}" != sqlite ]]; then export TEST_POSTGRES_PSQL="$(pg_bindir)/psql"
else skipped "test/db/ferretdbIndexes.test.ts (PostgreSQL's indexes under FerretDB), because EMBEDDED_DB=sqlite"; fi
export TEST_TEMPORAL_CLI="$TOOLS/bin/temporal"
export TEMPORAL_TEST_SERVER_PATH="$ROOT/scripts/temporal-test-server.sh"
export TEST_RUN_DIR="$RUN"
export TEST_SUMMARY_FILE="$RUN/summary"
export LOG_LEVEL="${LOG_LEVEL:-silent}"

cd "$ROOT"
contract=0
# The contract run (redocly lint + schemathesis against the running API) goes first, so Jest's
# summary line closes the output. Skipped when Jest is given arguments (a subset of the tests),
# or with SKIP_CONTRACT=1.
if [[ $# -eq 0 && -z "${SKIP_CONTRACT:-}" ]]; then
  log "contract: redocly lint and schemathesis against the running API"
  bash "$ROOT/scripts/contract.sh" || contract=$?
  [[ $contract -eq 0 ]] || log "contract run failed (exit $contract)"
else
  skipped_because="$([[ $# -gt 0 ]] && echo "Jest was given arguments: $*" || echo "SKIP_CONTRACT is set")"
  skipped "the contract run (redocly lint and schemathesis), because $skipped_because"
fi

# The cluster job (test/cluster, jest.cluster.config.js): the real Temporal server with mutual TLS
# (scripts/temporal-cluster.sh) on free ports, its databases on this run's PostgreSQL, and a flow
# test through the API and a worker connected with the client certificate. Runs in a full run;
# arguments naming test/cluster run it alone (with those arguments); other arguments leave it out.
cluster_job=0 main_job=1
if [[ $# -eq 0 ]]; then cluster_job=1
elif [[ "$*" == *test/cluster* ]]; then cluster_job=1 main_job=0
else skipped "the cluster job (test/cluster on the real Temporal server), because Jest was given arguments: $*"; fi

status=0
if (( main_job )); then
  log "running jest"
  set +e
  npx jest "$@"
  status=$?
  set -e
  if [[ $status -ne 0 ]]; then
    log "jest failed; server logs:"; tail -n 20 "$RUN/ferretdb.log" "$RUN/temporal.log" "$RUN/postgres.log" >&2 2>/dev/null || true
  fi
fi

# Adds the cluster run's `N passed, N failed` line to the main run's (one closing line for CI).
merge_summaries() { # file...
  awk '{ for (i = 1; i <= NF; i++) { if ($(i) ~ /^passed/) p += $(i-1); if ($(i) ~ /^failed/) f += $(i-1); if ($(i) ~ /^skipped/) s += $(i-1) } }
    END { printf "Tests: %d passed, %d failed", p, f; if (s) printf ", %d skipped", s; printf "\n" }' "$@"
}
if (( cluster_job )); then
  source "$ROOT/scripts/temporal-cluster.sh"
  cluster_status=0
  t0=$SECONDS
  if [[ -z "${PG_SOCKET_DIR:-}" ]]; then # EMBEDDED_DB=sqlite: a PostgreSQL for Temporal alone
    ensure_postgres && start_postgres "$RUN/postgres" "$RUN/postgres.log" --no-sync || cluster_status=1
  fi
  CLUSTER_PORT="$(free_port)"
  if (( cluster_status == 0 )); then
    log "cluster job: starting the Temporal server (frontend, history, matching, worker; mutual TLS) on 127.0.0.1:$CLUSTER_PORT"
    start_temporal_cluster "$CLUSTER_PORT" 0 "$RUN/temporal-cluster" "$RUN/temporal-cluster-logs" || cluster_status=1
    # The test hands the client settings to the processes it starts itself; nothing else here uses them.
    unset TEMPORAL_TLS_CERT TEMPORAL_TLS_KEY TEMPORAL_TLS_CA TEMPORAL_TLS_SERVER_NAME
  fi
  if (( cluster_status == 0 )); then
    log "cluster job: the Temporal server answered after $((SECONDS - t0)) s; running jest (jest.cluster.config.js)"
    set +e
    cluster_args=(); (( main_job )) || cluster_args=("$@")
    TEST_TEMPORAL_CLUSTER_ADDRESS="127.0.0.1:$CLUSTER_PORT" TEST_TEMPORAL_CLUSTER_CERTS="$TEMPORAL_CLUSTER_CERTS" \
      TEST_SUMMARY_FILE="$RUN/summary-cluster" npx jest --config "$ROOT/jest.cluster.config.js" "${cluster_args[@]}"
    cluster_status=$?
    set -e
  else
    log "cluster job: the Temporal server did not start (logs below)"
    tail -n 20 "$RUN"/temporal-cluster-logs/*.log >&2 2>/dev/null || true
    echo "Tests: 0 passed, 1 failed" > "$RUN/summary-cluster"
  fi
  if [[ $cluster_status -ne 0 ]]; then
    log "cluster job failed; server logs:"; tail -n 20 "$RUN"/temporal-cluster-logs/temporal-{frontend,history,matching,worker}.log >&2 2>/dev/null || true
  fi
  log "cluster job: $((SECONDS - t0)) s in all"
  summaries=(); for f in "$RUN/summary" "$RUN/summary-cluster"; do [[ -s "$f" ]] && summaries+=("$f"); done
  if (( ${#summaries[@]} )); then merge_summaries "${summaries[@]}" > "$RUN/summary.all" && mv "$RUN/summary.all" "$RUN/summary"; fi
  (( status != 0 )) || status=$cluster_status
fi
if [[ $contract -ne 0 ]]; then log "failed: the contract run (see above)"; exit "$contract"; fi
exit $status
