#!/usr/bin/env bash
# `npm start`: installs whatever is missing, then runs database (FerretDB on a private
# PostgreSQL, or SQLite with EMBEDDED_DB=sqlite), Temporal (with Web UI), worker and API on
# embedded defaults until Ctrl-C. Data lives under .data/ (DATA_DIR). RUNTIME=deno (npm run
# start:deno) runs the worker and the API under Deno instead of Node (docs/architecture.md).
# TEMPORAL_MODE=cluster (npm run start:cluster) runs the real Temporal server instead of the dev
# server (scripts/temporal-cluster.sh; docs/running.md).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
LOG_TAG=start
DATA="${DATA_DIR:-$ROOT/.data}"
LOGS="$DATA/logs"
mkdir -p "$LOGS"

export PORT="${PORT:-3000}"
TEMPORAL_PORT="${TEMPORAL_PORT:-7233}"
TEMPORAL_UI_PORT="${TEMPORAL_UI_PORT:-8233}"
MONGO_PORT="${MONGO_PORT:-27017}"
export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-127.0.0.1:$TEMPORAL_PORT}"
export CLAIM_VERIFICATION="${CLAIM_VERIFICATION:-true}"

trap 'log "stopping..."; stop_all; log "stopped"; exit 0' INT TERM
trap 'stop_all' EXIT

ensure_node_modules
ensure_tools all
RUNTIME="${RUNTIME:-node}"
set_runtime_cmd "$RUNTIME"
# API_PROCESSES and WORKERS (docs/running.md): checked before anything starts.
WORKERS="${WORKERS:-1}" API_PROCESSES="${API_PROCESSES:-1}"
for n in WORKERS API_PROCESSES; do
  [[ "${!n}" =~ ^[1-9][0-9]*$ ]] || { log "$n must be an integer of 1 or more (got '${!n}')"; exit 1; }
done
if (( API_PROCESSES > 1 )) && [[ "$RUNTIME" == deno ]]; then
  log "API_PROCESSES=$API_PROCESSES: under Deno the API runs as one process per port; run several on different PORTs behind a balancer (docs/running.md, \"Several Deno API processes\")"
  exit 1
fi

if [[ -z "${MONGODB_URI:-}" ]]; then
  if port_open "$MONGO_PORT"; then log "port $MONGO_PORT is busy: set MONGO_PORT or MONGODB_URI"; exit 1; fi
  if [[ "${EMBEDDED_DB:-postgresql}" == sqlite ]]; then
    log "starting FerretDB (SQLite in $DATA/ferretdb) on 127.0.0.1:$MONGO_PORT"
  else
    ensure_postgres
    log "starting PostgreSQL (data in $DATA/postgres) and FerretDB on 127.0.0.1:$MONGO_PORT"
  fi
  if [[ "${EMBEDDED_DB:-postgresql}" == sqlite ]]; then
    start_ferretdb_sqlite() { start_ferretdb "$MONGO_PORT" "$DATA/ferretdb" "$LOGS/ferretdb.log" sqlite; }
    supervise ferretdb start_ferretdb_sqlite
  else
    start_pg() { start_postgres "$DATA/postgres" "$LOGS/postgres.log"; }
    start_ferretdb_pg() { start_ferretdb "$MONGO_PORT" "$DATA/ferretdb" "$LOGS/ferretdb.log" postgresql "$PG_FERRETDB_URL"; }
    supervise postgresql start_pg
    supervise ferretdb start_ferretdb_pg
  fi
  export MONGODB_URI="mongodb://127.0.0.1:$MONGO_PORT/payments"
else
  log "using MONGODB_URI from the environment"
fi

if [[ "${TEMPORAL_MODE:-dev}" == cluster ]]; then
  # npm run start:cluster: the real Temporal server (scripts/temporal-cluster.sh), mutual TLS on its
  # frontend; the API and the worker get the client certificate (TEMPORAL_TLS_*).
  source "$ROOT/scripts/temporal-cluster.sh"
  if port_open "$TEMPORAL_PORT"; then log "port $TEMPORAL_PORT is busy: set TEMPORAL_PORT"; exit 1; fi
  export TEMPORAL_ADDRESS="127.0.0.1:$TEMPORAL_PORT"
  if [[ -z "${PG_SOCKET_DIR:-}" ]]; then # MONGODB_URI or EMBEDDED_DB=sqlite: PostgreSQL for Temporal alone
    ensure_postgres
    start_pg() { start_postgres "$DATA/postgres" "$LOGS/postgres.log"; }
    supervise postgresql start_pg
  fi
  log "starting the Temporal server (frontend, history, matching, worker; data in $DATA/temporal-cluster) on $TEMPORAL_ADDRESS with mutual TLS, UI on $TEMPORAL_UI_PORT"
  prepare_temporal_cluster "$TEMPORAL_PORT" "$DATA/temporal-cluster" "$LOGS"
  for svc in "${TEMPORAL_CLUSTER_SERVICES[@]}"; do
    eval "start_temporal_$svc() { start_temporal_cluster_service $svc \"\$DATA/temporal-cluster\" \"\$LOGS\"; }"
    supervise "temporal-$svc" "start_temporal_$svc"
  done
  await_temporal_cluster "$TEMPORAL_PORT" "$LOGS"
  start_temporal_ui() { start_temporal_cluster_ui "$TEMPORAL_PORT" "$TEMPORAL_UI_PORT" "$DATA/temporal-cluster" "$LOGS"; }
  supervise temporal-ui start_temporal_ui
elif [[ "${TEMPORAL_ADDRESS}" == "127.0.0.1:$TEMPORAL_PORT" ]]; then
  if port_open "$TEMPORAL_PORT"; then log "port $TEMPORAL_PORT is busy: set TEMPORAL_PORT or TEMPORAL_ADDRESS"; exit 1; fi
  log "starting Temporal dev server on $TEMPORAL_ADDRESS (UI on $TEMPORAL_UI_PORT)"
  start_temporal() { start_temporal_dev "$TEMPORAL_PORT" "$TEMPORAL_UI_PORT" "$DATA/temporal/temporal.db" "$LOGS/temporal.log"; }
  supervise temporal start_temporal
else
  log "using TEMPORAL_ADDRESS=$TEMPORAL_ADDRESS from the environment"
fi

# The API's rate limits count in Redis (REDIS_URL), as in production: shared by every API process.
if [[ -z "${REDIS_URL:-}" ]]; then
  REDIS_PORT="${REDIS_PORT:-6379}"
  ensure_redis
  if port_open "$REDIS_PORT"; then log "port $REDIS_PORT is busy: set REDIS_PORT or REDIS_URL"; exit 1; fi
  log "starting Redis (rate-limit counters, no persistence) on 127.0.0.1:$REDIS_PORT"
  start_redis_local() { start_redis "$REDIS_PORT" "$DATA/redis" "$LOGS/redis.log"; }
  supervise redis start_redis_local
  export REDIS_URL="redis://127.0.0.1:$REDIS_PORT"
else
  log "using REDIS_URL from the environment"
fi

if [[ "${DEV_CHAIN:-}" == "1" && -z "${ETH_RPC_URL:-}" ]]; then
  ETH_PORT="${ETH_PORT:-8545}"
  log "starting a local Ethereum development chain (ganache, a block every 2 s) on 127.0.0.1:$ETH_PORT"
  start_chain() { start_dev_chain "$ETH_PORT" "$LOGS/ganache.log" --miner.blockTime 2; }
  supervise ganache start_chain
  export ETH_CONFIRMATIONS="${ETH_CONFIRMATIONS:-2}" ETH_POLL_SECONDS="${ETH_POLL_SECONDS:-2}"
fi

# WORKERS=N worker processes, each supervised on its own (worker-1 ...), each with its own metrics
# ports; API_PROCESSES=N API processes on PORT: on Node one supervised primary (src/api/cluster.ts,
# Node's cluster module) that restarts its own processes; under Deno one process only (docs/running.md,
# "Several API processes and workers").
if (( API_PROCESSES > 1 )) && [[ -z "${REDIS_URL:-}" ]]; then
  log "API_PROCESSES=$API_PROCESSES needs the shared rate-limit counters (REDIS_URL)"; exit 1
fi
export API_PROCESSES
WORKER_METRICS_BASE="${WORKER_METRICS_PORT:-9464}" TEMPORAL_METRICS_BASE="${TEMPORAL_METRICS_PORT:-9465}"
log "starting $WORKERS worker process(es) ($RUNTIME)"
for ((w = 1; w <= WORKERS; w++)); do
  # worker-1 keeps the configured ports (0 stays 0: a free port); worker-k the next pair but k-1.
  wm=$WORKER_METRICS_BASE tm=$TEMPORAL_METRICS_BASE
  if (( w > 1 )); then
    (( wm > 0 )) && wm=$((wm + 2 * (w - 1)))
    (( tm > 0 )) && tm=$((tm + 2 * (w - 1)))
  fi
  wlog="$LOGS/worker.log"; (( WORKERS > 1 )) && wlog="$LOGS/worker-$w.log"
  eval "start_worker_$w() { start_bg '$wlog' env WORKER_METRICS_PORT=$wm TEMPORAL_METRICS_PORT=$tm \"\${RUNTIME_CMD[@]}\" \"\$ROOT/worker.ts\" >/dev/null; }"
  supervise "worker-$w" "start_worker_$w"
done
API_ENTRY="$ROOT/src/api/server.ts"
(( API_PROCESSES > 1 )) && API_ENTRY="$ROOT/src/api/cluster.ts"
log "starting API on port $PORT ($RUNTIME, $API_PROCESSES process(es))"
start_api() { start_bg "$LOGS/api.log" "${RUNTIME_CMD[@]}" "$API_ENTRY" >/dev/null; }
supervise api start_api
# Supervision covers this wait too: a part that dies before the API answers is restarted.
wait_for_http "http://127.0.0.1:$PORT/readyz" api 120 "$LOGS" || { tail -n 30 "$LOGS/api.log" "$LOGS"/worker*.log >&2; exit 1; }

cat <<MSG

  API          http://localhost:$PORT/v1   (health: /healthz, /readyz)
  Temporal UI  http://localhost:$TEMPORAL_UI_PORT
${TEMPORAL_CLUSTER_CERTS:+  Temporal     the real server on $TEMPORAL_ADDRESS, mutual TLS (certificates in $TEMPORAL_CLUSTER_CERTS):
    $TOOLS/bin/temporal workflow list --address localhost:$TEMPORAL_PORT \\
      --tls-cert-path $TEMPORAL_CLUSTER_CERTS/client.pem --tls-key-path $TEMPORAL_CLUSTER_CERTS/client.key \\
      --tls-ca-path $TEMPORAL_CLUSTER_CERTS/ca.pem
}  Logs         $LOGS/
${ETH_RPC_URL:+  ETH node     $ETH_RPC_URL (watched: ${ETH_CONFIRMATIONS:-12} confirmations, poll ${ETH_POLL_SECONDS:-5} s)
}
  Create an account (prints its tokens):
    npm run --silent cli -- accounts create --email you@example.com --password 'a-long-password' --json

  Then:  curl -H "Authorization: Bearer <token>" http://localhost:$PORT/v1/me

  Ctrl-C stops everything.
MSG

# A part that dies is restarted (with backoff); the others keep serving. Only Ctrl-C, or a part
# failing again and again, stops everything (scripts/lib.sh: supervise_forever).
supervise_forever "$LOGS"
