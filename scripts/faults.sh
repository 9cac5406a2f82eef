#!/usr/bin/env bash
# `npm run faults [--short] [scenario ...]`: the fault suite (faults/index.ts) on the real stack.
# This script installs what is missing and starts PostgreSQL (FerretDB's backend) with the
# settings of `npm start` (fsync on) on throwaway data; the suite runs FerretDB, the Temporal dev
# server, the API and the worker itself, so that it can kill and restart each of them.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
LOG_TAG=faults
RUN="$(mktemp -d "${TMPDIR:-/tmp}/payments-faults.XXXXXX")"
keep_logs() { mkdir -p "$ROOT/.data/faults-logs" && cp "$RUN"/*.log "$ROOT/.data/faults-logs/" 2>/dev/null || true; }
trap 'stop_all; keep_logs; rm -rf "$RUN"' EXIT
trap 'exit 130' INT TERM

ensure_node_modules
ensure_tools all
if [[ "${EMBEDDED_DB:-postgresql}" != sqlite ]]; then
  ensure_postgres
  start_postgres "$RUN/postgres" "$RUN/postgres.log"
  export PG_FERRETDB_URL
else
  unset PG_FERRETDB_URL
fi
export FAULTS_RUN_DIR="$RUN"
cd "$ROOT"
node --import tsx faults/index.ts "$@"
