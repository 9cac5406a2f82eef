#!/usr/bin/env bash
# The contract as a document, checked against the running service:
#   1. starts the API on a free port with throwaway data (a database of its own, dropped at the
#      end; a Temporal task queue of its own, no worker),
#   2. lints the OpenAPI document it serves (`redocly lint`, config redocly.yaml),
#   3. fuzzes the API from that document with schemathesis (every check, fixed seed, bounded
#      examples), authenticated with the token of a fresh account made by the CLI,
#   4. stops the API.
# Assumes the database and Temporal are running: MONGODB_URI or TEST_MONGODB_URL (a server URL;
# any database name in it is replaced), TEMPORAL_ADDRESS or TEST_TEMPORAL_ADDRESS.
# Tunables: CONTRACT_MAX_EXAMPLES (default 10), CONTRACT_SEED (default 11), CONTRACT_REPORT_DIR.
# Extra arguments go to `schemathesis run` (e.g. --include-path /customers --phases fuzzing).
# Exit status: non-zero when the lint or any schemathesis check fails.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
LOG_TAG=contract

SCHEMATHESIS_VERSION=4.32.5
VENV="$TOOLS/venv"
MAX_EXAMPLES="${CONTRACT_MAX_EXAMPLES:-10}"
SEED="${CONTRACT_SEED:-11}"

# --- schemathesis, pinned, from PyPI into a git-ignored virtualenv ---------------------------
ensure_schemathesis() {
  local stamp="$VENV/.schemathesis-$SCHEMATHESIS_VERSION"
  # Run, not just present: a virtualenv is not relocatable (its scripts name the folder it was
  # made in), so one made under another path is rebuilt.
  [[ -f "$stamp" ]] && "$VENV/bin/schemathesis" --version >/dev/null 2>&1 && return 0
  local py; py="$(command -v python3 || true)"
  [[ -n "$py" ]] || { log "python3 is required for schemathesis"; return 1; }
  if ! "$py" -m venv --help >/dev/null 2>&1; then apt_install "python3-venv (schemathesis)" python3-venv; fi
  log "installing schemathesis $SCHEMATHESIS_VERSION into $VENV..."
  rm -rf "$VENV"
  "$py" -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "schemathesis==$SCHEMATHESIS_VERSION"
  touch "$stamp"
}

server_url() { # mongodb://host:port[/db][?opts] -> mongodb://host:port
  local u=$1 rest
  rest="${u#mongodb://}"; rest="${rest%%\?*}"; rest="${rest%%/*}"
  echo "mongodb://$rest"
}

BASE_MONGO="${MONGODB_URI:-${TEST_MONGODB_URL:-}}"
TEMPORAL="${TEMPORAL_ADDRESS:-${TEST_TEMPORAL_ADDRESS:-}}"
[[ -n "$BASE_MONGO" ]] || { log "set MONGODB_URI or TEST_MONGODB_URL (the database must be running)"; exit 2; }
[[ -n "$TEMPORAL" ]] || { log "set TEMPORAL_ADDRESS or TEST_TEMPORAL_ADDRESS (Temporal must be running)"; exit 2; }

ensure_node_modules
ensure_schemathesis

RUN="$(mktemp -d "${TMPDIR:-/tmp}/payments-contract.XXXXXX")"
SUFFIX="$$_$RANDOM"
export MONGODB_URI="$(server_url "$BASE_MONGO")/contract_$SUFFIX"
export TEMPORAL_ADDRESS="$TEMPORAL"
export TEMPORAL_TASK_QUEUE="contract-$SUFFIX"
PORT="$(free_port)"
export PORT HOST=127.0.0.1 PUBLIC_URL="http://127.0.0.1:$PORT"
# The fuzzer sends thousands of requests a minute with one token: the per-token limit would answer
# most of them 429 and test nothing else (429 itself is covered by test/api/http.test.ts).
export RATE_LIMIT_PER_MINUTE=1000000
# Likewise the per-IP limit of the public claim routes (its own tests are in test/api).
export PUBLIC_RATE_LIMIT_PER_MINUTE=1000000
export LOG_LEVEL="${CONTRACT_LOG_LEVEL:-warn}"
REPORT="${CONTRACT_REPORT_DIR:-$RUN/report}"

drop_database() {
  (cd "$ROOT" && node -e "
    const m = require('mongoose');
    m.connect(process.argv[1], { serverSelectionTimeoutMS: 5000 })
      .then(() => m.connection.db.dropDatabase()).catch(() => {}).finally(() => m.disconnect());
  " "$MONGODB_URI") >/dev/null 2>&1 || true
}
cleanup() {
  local status=$?
  stop_all
  drop_database
  if [[ $status -ne 0 && -f "$RUN/api.log" ]]; then log "API log (last lines):"; tail -n 30 "$RUN/api.log" >&2 || true; fi
  [[ -n "${CONTRACT_REPORT_DIR:-}" ]] || rm -rf "$RUN"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

STARTED=$SECONDS
log "starting the API on 127.0.0.1:$PORT (database contract_$SUFFIX)"
start_bg "$RUN/api.log" node --import tsx "$ROOT/src/api/server.ts" >/dev/null
wait_for_http "http://127.0.0.1:$PORT/readyz" api 120

log "creating a fresh account with the CLI"
ACCOUNT_JSON="$(cd "$ROOT" && npm run --silent cli -- accounts create --email "contract-$SUFFIX@example.com" --password 'a-long-password' --json)"
TOKEN="$(node -e "process.stdout.write(JSON.parse(process.argv[1]).token)" "$ACCOUNT_JSON")"

DOC_URL="http://127.0.0.1:$PORT/v1/openapi.json"
node -e "fetch(process.argv[1]).then(r => r.ok ? r.text() : Promise.reject(new Error('HTTP ' + r.status))).then(t => require('fs').writeFileSync(process.argv[2], t))" \
  "$DOC_URL" "$RUN/openapi.json"

log "redocly lint of $DOC_URL"
lint=0
(cd "$ROOT" && npx --no-install redocly lint --config "$ROOT/redocly.yaml" --format stylish "$RUN/openapi.json") >"$RUN/lint.log" 2>&1 || lint=$?
# Redocly's banner about Node 20 is noise here; everything else is shown.
grep -v -e 'Node.js' -e '^ *[╔║╚]' -e '^\s*$' "$RUN/lint.log" >&2 || true
if [[ $lint -ne 0 ]]; then log "redocly lint failed"; exit $lint; fi

log "schemathesis $SCHEMATHESIS_VERSION: --checks all, seed $SEED, at most $MAX_EXAMPLES examples per operation"
mkdir -p "$REPORT"
set +e
(cd "$ROOT" && "$VENV/bin/schemathesis" --config-file "$ROOT/schemathesis.toml" run "$DOC_URL" \
  --checks all \
  --seed "$SEED" \
  --max-examples "$MAX_EXAMPLES" \
  --workers 1 \
  --header "Authorization: Bearer $TOKEN" \
  --request-timeout 20 \
  --generation-database none \
  --no-color \
  --report junit --report-dir "$REPORT" \
  "$@") 2>&1 | sed -u -E -e 's/={3,}/---/g' -e 's/^/  schemathesis | /'
# Each line prefixed and its ==== rules turned to ---: schemathesis closes with a pytest-style
# "=== 2 warnings in 19s ===" line, which CI would read as a test runner that executed no test.
status=${PIPESTATUS[0]}
set -e
log "contract run took $((SECONDS - STARTED)) s (schemathesis exit $status)"
exit $status
