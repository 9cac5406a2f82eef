#!/usr/bin/env bash
# Checks a runtime's HTTP/2 client against Temporal's max-connection-age GOAWAY (docs/architecture.md,
# "Why the native Temporal client on Deno"): a throwaway Temporal dev server that closes every client connection at an age of
# 5 s (production: 5 min), and scripts/deno-goaway.ts calling it for 30 s. Deno 2.9.4 to 2.9.6
# with grpc-js die at about 5 s (exit 134 with nghttp2's assertion, or 139); native survives.
#   bash scripts/deno-goaway.sh [grpc-js|native] [deno|node] [path of another deno binary]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
LOG_TAG=deno-goaway
TRANSPORT="${1:-grpc-js}" RUNTIME="${2:-deno}"
RUN="$(mktemp -d "${TMPDIR:-/tmp}/deno-goaway.XXXXXX")"
trap 'stop_all; rm -rf "$RUN"' EXIT
ensure_node_modules
ensure_tools temporal >/dev/null
PORT="$(free_port)"
start_bg "$RUN/temporal.log" "$TOOLS/bin/temporal" server start-dev --ip 127.0.0.1 --port "$PORT" --headless \
  --namespace default --db-filename "$RUN/temporal.db" --log-level warn \
  --dynamic-config-value 'frontend.keepAliveMaxConnectionAge="5s"' \
  --dynamic-config-value 'frontend.keepAliveMaxConnectionAgeGrace="2s"' >/dev/null
wait_for_port "$PORT" temporal 120
set_runtime_cmd "$RUNTIME"
if [[ -n "${3:-}" ]]; then RUNTIME_CMD[0]="$3"; fi
[[ "$RUNTIME" == deno ]] && log "$("${RUNTIME_CMD[0]}" --version | head -1), transport $TRANSPORT" || log "node $(node --version), transport $TRANSPORT"
set +e
(cd "$ROOT" && TEMPORAL_ADDRESS="127.0.0.1:$PORT" TRANSPORT="$TRANSPORT" "${RUNTIME_CMD[@]}" scripts/deno-goaway.ts)
status=$?
set -e
if [[ $status -eq 0 ]]; then log "survived"; else log "died: exit status $status"; fi
exit $status
