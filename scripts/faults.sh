#!/usr/bin/env bash
# `npm run faults [--short] [scenario or prefix ...]`: the fault suite (faults/index.ts) on the real
# stack; `npm run faults -- cluster` runs the cluster-* scenarios.
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

# The cluster-* scenarios (all of them: `npm run faults -- cluster`) run on the real Temporal server
# (scripts/temporal-cluster.sh) on this PostgreSQL: certificates, ports, databases and config are
# made here; faults/cluster.ts starts the four services itself (exec_temporal_cluster_service), so
# that a scenario can kill and restart one of them. Wanted when no scenario is named or one named
# starts with "cluster".
wants_cluster=1
for arg in "$@"; do [[ "$arg" == --* ]] || wants_cluster=0; done
for arg in "$@"; do [[ "$arg" == cluster* ]] && wants_cluster=1; done
if (( wants_cluster )); then
  if [[ -z "${PG_SOCKET_DIR:-}" ]]; then
    log "the cluster scenarios need PostgreSQL (EMBEDDED_DB=sqlite starts none); they will fail"
  else
    source "$ROOT/scripts/temporal-cluster.sh"
    FAULTS_CLUSTER_PORT="$(free_port)"
    prepare_temporal_cluster "$FAULTS_CLUSTER_PORT" "$RUN/temporal-cluster" "$RUN"
    # The client settings go to the cluster scenarios' processes only (faults/cluster.ts): the
    # other scenarios' API and worker reach the dev server without TLS.
    export FAULTS_CLUSTER_PORT FAULTS_CLUSTER_DIR="$RUN/temporal-cluster" FAULTS_CLUSTER_CERTS="$TEMPORAL_CLUSTER_CERTS"
    unset TEMPORAL_TLS_CERT TEMPORAL_TLS_KEY TEMPORAL_TLS_CA TEMPORAL_TLS_SERVER_NAME
  fi
fi
cd "$ROOT"
node --import tsx faults/index.ts "$@"
