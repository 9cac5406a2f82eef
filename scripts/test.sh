#!/usr/bin/env bash
# `npm test`: installs whatever is missing, starts a throwaway FerretDB (on PostgreSQL, or on
# SQLite with EMBEDDED_DB=sqlite) and a headless Temporal dev server on free ports, runs every
# Jest test (time-skipping tests start the Temporal test server themselves), then stops what it
# started. Extra args go to Jest.
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
export CHROMIUM_PATH="${CHROMIUM_PATH:-$(command -v chromium)}"

# SKIP_TYPECHECK=1 skips both static checks (while iterating on a few test files); said in the output.
if [[ -z "${SKIP_TYPECHECK:-}" ]]; then
  log "type-checking"
  (cd "$ROOT" && npx tsc --noEmit)
  log "linting (import cycles and layer rules, eslint.config.js)"
  (cd "$ROOT" && npx eslint .)
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

export TEST_MONGODB_URL="mongodb://127.0.0.1:$MONGO_PORT"
export TEST_TEMPORAL_ADDRESS="127.0.0.1:$TEMPORAL_PORT"
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

log "running jest"
set +e
npx jest "$@"
status=$?
set -e
if [[ $status -ne 0 ]]; then
  log "jest failed; server logs:"; tail -n 20 "$RUN/ferretdb.log" "$RUN/temporal.log" "$RUN/postgres.log" >&2 2>/dev/null || true
fi
if [[ $contract -ne 0 ]]; then log "failed: the contract run (see above)"; exit "$contract"; fi
exit $status
