# Shared helpers for start.sh / test.sh / bench.sh. Sourced, not run.
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
PIDS=()

log() { printf '\033[1m[%s]\033[0m %s\n' "${LOG_TAG:-stack}" "$*" >&2; }

ensure_node_modules() {
  local stamp="$ROOT/node_modules/.install-stamp"
  if [[ ! -f "$stamp" || "$ROOT/package-lock.json" -nt "$stamp" ]]; then
    log "installing npm packages (versions pinned by package-lock.json)..."
    # `npm install` rather than `npm ci`: npm 11 leaves other platforms' optional binaries
    # out of the lock file and `npm ci` then refuses it; install still honours the lock.
    (cd "$ROOT" && npm install --no-audit --no-fund --loglevel=error)
    touch "$stamp"
  fi
}

ensure_tools() { bash "$ROOT/scripts/install-tools.sh" "${1:-all}"; }

# The Deno binary that the pinned `deno` npm package ships (its own lookup: node_modules/deno/deno,
# else the platform package's binary). Run directly, not through its node wrapper (bin.cjs), so a
# signal from the supervisor reaches Deno itself.
deno_bin() { (cd "$ROOT" && node -e "process.stdout.write(require('deno/install_api.cjs').runInstall())"); }

# Sets RUNTIME_CMD: the command that runs a TypeScript entry file (worker.ts, src/api/server.ts)
# on runtime $1. node: tsx. deno: all permissions, and sloppy imports for the extensionless
# relative imports the sources use; no update check (no network here).
set_runtime_cmd() { # node|deno
  case "$1" in
    node) RUNTIME_CMD=(node --import tsx) ;;
    deno)
      local bin; bin="$(deno_bin)" || { log "the deno npm package is not installed (npm install)"; return 1; }
      export DENO_NO_UPDATE_CHECK=1
      RUNTIME_CMD=("$bin" run -A --unstable-sloppy-imports) ;;
    *) log "RUNTIME must be node or deno (got '$1')"; return 1 ;;
  esac
}

free_port() {
  node -e "const s=require('net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for_port() { # port name seconds
  local port=$1 name=$2 secs=${3:-60} i
  for ((i = 0; i < secs * 5; i++)); do
    if port_open "$port"; then return 0; fi
    sleep 0.2
  done
  log "$name did not open port $port within ${secs}s"; return 1
}

any_dead() {
  local pid
  for pid in "${PIDS[@]:-}"; do [[ -n "$pid" ]] && ! kill -0 "$pid" 2>/dev/null && return 0; done
  return 1
}

# One HTTP GET, 2xx or not, without starting a process: curl when the machine has it, else bash's
# /dev/tcp (http:// only).
http_ok() { # url
  if command -v curl >/dev/null; then curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null; return; fi
  local rest=${1#http://} hostport path status
  hostport=${rest%%/*}; path=/${rest#*/}; [[ "$rest" == */* ]] || path=/
  (
    exec 3<>"/dev/tcp/${hostport%%:*}/${hostport##*:}" || exit 1
    printf 'GET %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n' "$path" "$hostport" >&3
    IFS=' ' read -r -t 2 _ status _ <&3 || exit 1
    [[ "$status" == 2?? ]]
  ) 2>/dev/null
}

wait_for_http() { # url name seconds [logdir: supervised processes that die meanwhile are restarted]
  local url=$1 name=$2 secs=${3:-60} logs=${4:-} end=$((SECONDS + ${3:-60}))
  while (( SECONDS < end )); do
    if [[ -n "$logs" ]]; then restart_dead "$logs" || return 1
    elif any_dead; then log "a process exited while waiting for $name"; return 1; fi
    if http_ok "$url"; then return 0; fi
    sleep 0.5
  done
  log "$name not healthy at $url within ${secs}s"; return 1
}

start_bg() { # logfile cmd...
  local logfile=$1; shift
  "$@" >>"$logfile" 2>&1 &
  PIDS+=($!)
  echo $!
}

# Stops what start_bg started: everything else first (TERM), then PostgreSQL last with a fast
# shutdown (INT: disconnects its clients, writes a checkpoint, and waits for its own processes).
stop_all() {
  local pid
  for pid in "${PIDS[@]:-}"; do [[ -n "$pid" && "$pid" != "${PG_PID:-}" ]] && kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]:-}"; do [[ -n "$pid" && "$pid" != "${PG_PID:-}" ]] && wait "$pid" 2>/dev/null || true; done
  if [[ -n "${PG_PID:-}" ]]; then
    kill -INT "$PG_PID" 2>/dev/null || true
    wait "$PG_PID" 2>/dev/null || true
    PG_PID=""
  fi
  [[ -n "${PG_SOCKET_TMP:-}" ]] && rm -rf "$PG_SOCKET_TMP" && PG_SOCKET_TMP=""
  PIDS=()
}

# --- supervision (npm start) -------------------------------------------------------------------
# `supervise NAME FUNC` runs FUNC (which starts one process with start_bg) and remembers it, so
# supervise_forever can run FUNC again when that process dies.
SUP_NAMES=(); SUP_FUNCS=(); SUP_PIDS=(); SUP_STARTED=(); SUP_FAILS=()
supervise() { # name func
  "$2"
  SUP_NAMES+=("$1"); SUP_FUNCS+=("$2"); SUP_PIDS+=("${PIDS[-1]}"); SUP_STARTED+=("$SECONDS"); SUP_FAILS+=(0)
}

# Restarts what died, after 1, 2, 4 ... 30 s. A process that ran for SUPERVISE_STABLE_SECONDS (60)
# before dying starts a fresh count; one that dies SUPERVISE_MAX_FAILURES (5) times in a row
# without running that long makes it return 1 (the caller stops everything). One pass over the
# supervised processes: supervise_forever loops on it, and so does wait_for_http during start-up.
restart_dead() { # logdir
  local logs=$1 i pid delay max="${SUPERVISE_MAX_FAILURES:-5}" stable="${SUPERVISE_STABLE_SECONDS:-60}"
  for i in "${!SUP_NAMES[@]}"; do
    pid="${SUP_PIDS[$i]}"
    kill -0 "$pid" 2>/dev/null && continue
    local code=0; wait "$pid" 2>/dev/null || code=$?
    if (( SECONDS - SUP_STARTED[i] >= stable )); then SUP_FAILS[i]=0; fi
    SUP_FAILS[i]=$((SUP_FAILS[i] + 1))
    if (( SUP_FAILS[i] > max )); then
      log "${SUP_NAMES[$i]} (pid $pid) exited (status $code) ${SUP_FAILS[$i]} times in a row; stopping everything (logs: $logs/)"
      return 1
    fi
    delay=$(( 1 << (SUP_FAILS[i] - 1) )); (( delay > 30 )) && delay=30
    log "${SUP_NAMES[$i]} (pid $pid) exited (status $code); restarting it in ${delay}s (failure ${SUP_FAILS[$i]} of $max in a row; logs: $logs/)"
    sleep "$delay"
    forget_pid "$pid"
    local before=${#PIDS[@]} ok=0
    "${SUP_FUNCS[$i]}" && ok=1
    # The new process, if its start function got that far ("none" reads as dead: tried again next round).
    if (( ${#PIDS[@]} > before )); then SUP_PIDS[i]="${PIDS[-1]}"; else SUP_PIDS[i]=none; fi
    SUP_STARTED[i]=$SECONDS
    if (( ok )); then log "${SUP_NAMES[$i]} restarted (pid ${SUP_PIDS[$i]})"; else log "${SUP_NAMES[$i]} did not come back; trying again"; fi
  done
  return 0
}

supervise_forever() { # logdir
  while true; do
    restart_dead "$1" || exit 1
    sleep 1
  done
}

forget_pid() { # pid: drop a dead process from PIDS
  local keep=() p
  for p in "${PIDS[@]:-}"; do [[ -n "$p" && "$p" != "$1" ]] && keep+=("$p"); done
  PIDS=("${keep[@]:-}")
}

# The embedded MongoDB-wire server: FerretDB v1 on PostgreSQL (default) or on SQLite
# (EMBEDDED_DB=sqlite, the previous default: slower, every filter but `_id` scans; kept because it
# costs nothing). Data: <datadir>/postgres for PostgreSQL, <datadir>/ferretdb/sqlite for SQLite.
start_embedded_db() { # port datadir logdir
  local port=$1 dir=$2 logs=$3
  case "${EMBEDDED_DB:-postgresql}" in
    postgresql|postgres|pg)
      start_postgres "$dir/postgres" "$logs/postgres.log" ${PG_NO_SYNC:+--no-sync}
      start_ferretdb "$port" "$dir/ferretdb" "$logs/ferretdb.log" postgresql "$PG_FERRETDB_URL" ;;
    sqlite)
      start_ferretdb "$port" "$dir/ferretdb" "$logs/ferretdb.log" sqlite ;;
    *) log "EMBEDDED_DB must be postgresql or sqlite (got '$EMBEDDED_DB')"; return 1 ;;
  esac
}

# FerretDB v1.24.2: a real MongoDB-wire server. Handler `postgresql` needs start_postgres first.
# Go's collector for the two Go servers (FerretDB, the Temporal dev server): a collection at 5x the
# live heap instead of 2x, capped by a soft memory limit. Measured in the benches: about a fifth
# less CPU in FerretDB and a tenth less in the dev server; the dev server's peak RSS went from
# ~340 to ~670 MiB (GOGC=800 took it to 1.2 GB and saved nothing more). Values already in the
# environment win.
GO_SERVER_ENV=(env "GOGC=${GOGC:-400}" "GOMEMLIMIT=${GOMEMLIMIT:-1GiB}")

start_ferretdb() { # port datadir logfile [postgresql <url> | sqlite]
  local port=$1 dir=$2 logfile=$3 handler=${4:-sqlite} url=${5:-}
  mkdir -p "$dir/state"
  # Its metrics/debug listener would take 127.0.0.1:8088 and clash with a second instance.
  local debug_port; debug_port="$(free_port)"
  local backend=()
  if [[ "$handler" == postgresql ]]; then
    backend=(--handler=postgresql --postgresql-url="$url")
  else
    mkdir -p "$dir/sqlite"
    # _txlock=immediate: a write transaction takes SQLite's write lock at BEGIN and waits on the
    # busy timeout, instead of failing with SQLITE_BUSY when a read lock cannot be upgraded.
    backend=(--handler=sqlite --sqlite-url="file:$dir/sqlite/?_txlock=immediate")
  fi
  start_bg "$logfile" "${GO_SERVER_ENV[@]}" "$TOOLS/bin/ferretdb" --debug-addr="127.0.0.1:$debug_port" "${backend[@]}" \
    --state-dir="$dir/state" --listen-addr="127.0.0.1:$port" --telemetry=disable --log-level=warn >/dev/null
  wait_for_port "$port" ferretdb 60 || { tail -n 20 "$logfile" >&2; return 1; }
}

# --- Redis (the API's shared rate-limit counters, REDIS_URL) -------------------------------------
redis_bin() {
  local b
  for b in "$(command -v redis-server 2>/dev/null)" /usr/bin/redis-server; do [[ -n "$b" && -x "$b" ]] && { echo "$b"; return 0; }; done
  return 1
}

ensure_redis() {
  redis_bin >/dev/null && return 0
  apt_install "Redis (the API's shared counters)" redis-server && redis_bin >/dev/null
}

# Debian's redis-server in the foreground, on 127.0.0.1:<port> only (protected mode on), no
# persistence (the counters are one-minute windows: losing them on a restart costs one window)
# and no Debian service: the process is ours, started with start_bg (supervised/stopped like the rest).
start_redis() { # port datadir logfile
  local port=$1 dir=$2 logfile=$3 bin
  bin="$(redis_bin)" || { log "redis-server is missing (ensure_redis)"; return 1; }
  mkdir -p "$dir"
  start_bg "$logfile" "$bin" --bind 127.0.0.1 --port "$port" --protected-mode yes --dir "$dir" \
    --save '' --appendonly no --daemonize no --supervised no --loglevel warning --maxmemory 256mb --maxmemory-policy volatile-ttl >/dev/null
  wait_for_port "$port" redis 30 || { tail -n 20 "$logfile" >&2; return 1; }
}

# --- PostgreSQL (FerretDB's backend) ---------------------------------------------------------
# A private cluster in <datadir>, owned by the OS user `postgres` when we are root (PostgreSQL
# refuses to run as root), reachable only on a Unix socket (no TCP port to clash with).

pg_bindir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -V -r); do
    [[ -x "$d/postgres" && -x "$d/initdb" ]] && { echo "$d"; return 0; }
  done
  if command -v initdb >/dev/null && command -v postgres >/dev/null; then
    dirname "$(readlink -f "$(command -v postgres)")"; return 0
  fi
  return 1
}

ensure_postgres() {
  pg_bindir >/dev/null && return 0
  apt_install "PostgreSQL (FerretDB's backend)" postgresql && pg_bindir >/dev/null
}

# Runs a command as the cluster's owner: `postgres` when we are root, else ourselves.
# setpriv execs in place (no wrapper process), so start_bg records the postmaster's own pid.
as_pg() { "${AS_PG[@]}" "$@"; }
if [[ $(id -u) -eq 0 ]]; then AS_PG=(setpriv --reuid=postgres --regid=postgres --init-groups --); else AS_PG=(); fi

# Lets `postgres` reach <dir>: adds search permission (o+x, not read) to any ancestor it cannot
# enter, e.g. a mktemp -d run directory (0700).
pg_make_reachable() { # dir
  local d=$1
  [[ $(id -u) -eq 0 ]] || return 0
  while [[ "$d" != / && -n "$d" ]]; do
    if ! as_pg test -x "$d" 2>/dev/null; then
      chmod o+x "$d"
      [[ "$d" == "$1" ]] || log "gave the postgres user search permission (o+x) on $d"
    fi
    d="$(dirname "$d")"
  done
}

# Settings (docs/storage.md has the reasons behind them):
# - synchronous_commit=on, fsync=on: a write is acknowledged only once its WAL is on disk, so a
#   kill -9 of any process (FerretDB, a backend, the postmaster) or a power loss loses nothing
#   acknowledged. synchronous_commit=off was faster but keeps commits in shared memory for up to
#   3 x wal_writer_delay, lost when a killed backend makes the postmaster reset shared memory.
# - plan_cache_mode=force_custom_plan: FerretDB passes the field name as a parameter
#   (`_jsonb->$1 @> $2`) through cached prepared statements; a generic plan cannot match the GIN
#   expression index and would scan.
# - wal_level=minimal: no replication, so index builds and new tables write less WAL.
# - log_min_messages=log: start, stop and recovery only. ERROR lines would be mostly duplicate keys,
#   which the service expects (idempotent inserts).
# - max_connections=450 and FerretDB's pool_max_conns=400 (below): FerretDB v1 runs an update or a
#   findAndModify as a query whose open iterator holds one pooled connection while the write takes
#   a second one from the same pool. With its default pool of 50, 50 concurrent updates each held
#   one and waited for another, for ever (seen in the renewals bench: every FerretDB goroutine in
#   pgxpool Acquire, PostgreSQL idle). Two connections per concurrent operation rule that out: the
#   API and the worker open at most 100 MongoDB connections each (the driver's maxPoolSize).
PG_SETTINGS=(
  -c listen_addresses=
  -c max_connections=450
  -c shared_buffers=256MB
  -c synchronous_commit=on
  -c fsync=on
  -c full_page_writes=on
  -c wal_level=minimal
  -c max_wal_senders=0
  -c max_wal_size=2GB
  -c checkpoint_timeout=15min
  -c plan_cache_mode=force_custom_plan
  -c jit=off
  -c log_min_messages=log
  -c log_min_error_statement=panic
  -c log_checkpoints=off
)

# Starts PostgreSQL on <datadir> (initdb on first use), creates FerretDB's database and installs
# the GIN companion trigger (scripts/ferretdb-gin.sql). Exports PG_SOCKET_DIR and
# PG_FERRETDB_URL; sets PG_PID, which stop_all stops last.
start_postgres() { # datadir logfile [--no-sync: throwaway data, no fsync at all]
  local dir=$1 logfile=$2 nosync=${3:-} bin i
  bin="$(pg_bindir)" || { log "PostgreSQL is not installed (no initdb/postgres found)"; return 1; }
  mkdir -p "$dir"
  if [[ $(id -u) -eq 0 ]]; then chown postgres:postgres "$dir"; fi
  chmod 700 "$dir"
  pg_make_reachable "$dir"
  if [[ ! -s "$dir/PG_VERSION" ]]; then
    log "initialising a PostgreSQL cluster in $dir"
    as_pg "$bin/initdb" -D "$dir" --username=postgres --auth=trust --encoding=UTF8 --locale=C \
      ${nosync:+--no-sync} >>"$logfile" 2>&1 || { tail -n 20 "$logfile" >&2; return 1; }
  fi
  # The socket lives in the data directory unless that path is too long for a Unix socket.
  PG_SOCKET_DIR="$dir"
  if (( ${#dir} > 80 )); then
    PG_SOCKET_DIR="$(mktemp -d "${TMPDIR:-/tmp}/pgsock.XXXXXX")"; PG_SOCKET_TMP="$PG_SOCKET_DIR"
    chmod 755 "$PG_SOCKET_DIR"; if [[ $(id -u) -eq 0 ]]; then chown postgres:postgres "$PG_SOCKET_DIR"; fi
  fi
  # A postmaster.pid left by a kill -9 is handled by PostgreSQL itself (it checks the pid).
  local extra=()
  if [[ -n "$nosync" ]]; then extra=(-c fsync=off -c synchronous_commit=off -c full_page_writes=off); fi
  # POSTGRES_OPTIONS: more settings, e.g. POSTGRES_OPTIONS="-c shared_buffers=1GB" (last one wins).
  local -a user_opts; read -r -a user_opts <<<"${POSTGRES_OPTIONS:-}"
  start_bg "$logfile" "${AS_PG[@]}" "$bin/postgres" -D "$dir" -c unix_socket_directories="$PG_SOCKET_DIR" \
    "${PG_SETTINGS[@]}" "${extra[@]}" "${user_opts[@]}" >/dev/null
  PG_PID="${PIDS[-1]}"
  for ((i = 0; i < 600; i++)); do
    if ! kill -0 "$PG_PID" 2>/dev/null; then log "PostgreSQL exited"; tail -n 20 "$logfile" >&2; return 1; fi
    if as_pg "$bin/pg_isready" -q -h "$PG_SOCKET_DIR" -d postgres -U postgres 2>/dev/null; then break; fi
    sleep 0.1
  done
  (( i < 600 )) || { log "PostgreSQL did not start within 60s"; tail -n 20 "$logfile" >&2; return 1; }
  local psql=("$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_SOCKET_DIR" -U postgres)
  if [[ "$(as_pg "${psql[@]}" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'ferretdb'")" != 1 ]]; then
    as_pg "${psql[@]}" -d postgres -c 'CREATE DATABASE ferretdb' >>"$logfile" 2>&1 || { tail -n 20 "$logfile" >&2; return 1; }
  fi
  as_pg "${psql[@]}" -d ferretdb -f - <"$ROOT/scripts/ferretdb-gin.sql" >>"$logfile" 2>&1 || { tail -n 20 "$logfile" >&2; return 1; }
  export PG_SOCKET_DIR
  export PG_FERRETDB_URL="postgres://postgres@/ferretdb?host=$PG_SOCKET_DIR&pool_max_conns=${FERRETDB_POOL_MAX_CONNS:-400}"
}

# A local Ethereum development chain (ganache, the project's pinned devDependency): deterministic
# funded accounts, one block per transaction. Exports ETH_RPC_URL once it answers JSON-RPC.
start_dev_chain() { # port logfile [ganache options, e.g. --miner.blockTime 2]
  local port=$1 logfile=$2 i; shift 2
  start_bg "$logfile" "$ROOT/node_modules/.bin/ganache" --wallet.deterministic --miner.instamine eager --logging.quiet \
    --chain.chainId 1337 --server.host 127.0.0.1 --server.port "$port" "$@" >/dev/null
  export ETH_RPC_URL="http://127.0.0.1:$port"
  for ((i = 0; i < 300; i++)); do
    if any_dead; then break; fi
    if node -e "fetch(process.argv[1],{method:'POST',headers:{'Content-Type':'application/json'},body:JSON.stringify({jsonrpc:'2.0',id:1,method:'eth_blockNumber',params:[]})}).then(r=>r.json()).then(j=>process.exit(typeof j.result==='string'?0:1),()=>process.exit(1))" "$ETH_RPC_URL"; then
      return 0
    fi
    sleep 0.2
  done
  log "ganache did not answer JSON-RPC at $ETH_RPC_URL"; tail -n 20 "$logfile" >&2; return 1
}

# Search attributes operators use to find subscriptions in the Temporal UI.
SEARCH_ATTRIBUTES=(AccountId=Keyword CustomerId=Keyword SubscriptionStatus=Keyword NextBillingDate=Datetime)

# The dev server's visibility table without the indexes no query of ours or of the UI's lists uses
# (scripts/temporal-visibility-indexes.py; docs/storage.md). Once the server has created its
# schema, i.e. after it opened its port; the drop is kept across restarts. TEMPORAL_VISIBILITY_INDEXES=all
# keeps every index. Without python3 the server runs with all of them.
lean_temporal_visibility() { # dbfile logfile
  [[ "${TEMPORAL_VISIBILITY_INDEXES:-lean}" == all ]] && return 0
  if ! command -v python3 >/dev/null; then log "python3 not found: the Temporal dev server keeps all its visibility indexes"; return 0; fi
  python3 "$ROOT/scripts/temporal-visibility-indexes.py" "$1" >>"$2" 2>&1 ||
    log "could not drop the dev server's unused visibility indexes (see $2); it runs with all of them"
}

start_temporal_dev() { # port uiport dbfile logfile [--headless]
  local port=$1 ui=$2 db=$3 logfile=$4; shift 4
  # WAL and synchronous=normal: ~5x the workflow starts/s of the default rollback journal with
  # full sync. A killed process loses nothing (WAL frames are written before a commit returns);
  # a power loss can lose the last commits (docs/storage.md).
  # busy_timeout: the server's one connection waits while temporal-visibility-indexes.py holds the
  # write lock for a moment, instead of failing with SQLITE_BUSY.
  # forceSearchAttributesCacheRefreshOnRead=false: the CLI turns it on so that a search attribute
  # added while the server runs is usable at once; it makes every start, search-attribute upsert and
  # visibility write read the cluster metadata from SQLite again (~5% of the server's CPU in the
  # webhooks bench). Ours are written with the database (--search-attribute) before it serves; one
  # an operator adds later is usable within the server's cache refresh (60 s).
  local args=(server start-dev --ip 127.0.0.1 --port "$port" --namespace default --db-filename "$db" --log-level warn
    --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal --sqlite-pragma busy_timeout=10000
    --dynamic-config-value system.forceSearchAttributesCacheRefreshOnRead=false)
  if [[ "${1:-}" == "--headless" ]]; then args+=(--headless); else args+=(--ui-port "$ui"); fi
  # TEMPORAL_DEV_EXTRA_ARGS: more dev server flags for an experiment, e.g. a --dynamic-config-value.
  # shellcheck disable=SC2206
  args+=(${TEMPORAL_DEV_EXTRA_ARGS:-})
  local sa; for sa in "${SEARCH_ATTRIBUTES[@]}"; do args+=(--search-attribute "$sa"); done
  mkdir -p "$(dirname "$db")"
  # The dev server picks its internal ports itself and panics when one cannot be had at that
  # moment ("failed assigning ephemeral port", seen once on a busy machine): a process that exits
  # while starting is started again, twice at most.
  local attempt pid i
  for attempt in 1 2 3; do
    start_bg "$logfile" "${GO_SERVER_ENV[@]}" "$TOOLS/bin/temporal" "${args[@]}" >/dev/null
    pid=${PIDS[-1]}
    for ((i = 0; i < 600; i++)); do
      if port_open "$port"; then lean_temporal_visibility "$db" "$logfile"; return 0; fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then break; fi
    local kept=() p; for p in "${PIDS[@]}"; do [[ "$p" == "$pid" ]] || kept+=("$p"); done; PIDS=("${kept[@]}")
    log "temporal exited while starting (attempt $attempt of 3)"; tail -n 3 "$logfile" >&2
  done
  log "temporal did not open port $port"; tail -n 20 "$logfile" >&2; return 1
}

# Debian packages (root only). Waits for another apt to finish; if an interrupted install left
# dpkg half-configured, repairs it and tries once more.
apt_install() {
  local what="$1"; shift
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null; then
    log "$what is missing and cannot be installed here (need root and apt-get)"; return 1
  fi
  log "installing $what from Debian packages..."
  local apt=(env DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1 apt-get -o DPkg::Lock::Timeout=600 -y -qq)
  "${apt[@]}" update >/dev/null
  if ! "${apt[@]}" install "$@" >/dev/null; then
    log "apt failed; repairing dpkg state and retrying"
    DEBIAN_FRONTEND=noninteractive dpkg --configure -a >/dev/null || true
    "${apt[@]}" --fix-broken install >/dev/null
    "${apt[@]}" install "$@" >/dev/null
  fi
}

# The docker-compose.yml check needs a compose implementation (no engine): Debian's docker-compose.
ensure_compose() {
  if docker compose version >/dev/null 2>&1 || command -v docker-compose >/dev/null 2>&1; then return 0; fi
  apt_install docker-compose docker-compose
}

# The alert rules (deploy/prometheus) and the dashboard's queries (deploy/grafana) are checked by
# promtool, from Debian's prometheus package (without its recommended exporters).
ensure_promtool() {
  if command -v promtool >/dev/null 2>&1; then return 0; fi
  apt_install "promtool (checks of the alert rules and the dashboard's queries)" --no-install-recommends prometheus && command -v promtool >/dev/null
}

# The pay page is tested in a real browser: Debian's chromium, driven by playwright-core.
ensure_chromium() {
  if command -v chromium >/dev/null 2>&1; then return 0; fi
  apt_install "chromium (browser tests of the pay page)" chromium
}

# Invoice PDFs are read back in the tests with pdftotext: Debian's poppler-utils.
ensure_poppler() {
  if command -v pdftotext >/dev/null 2>&1; then return 0; fi
  apt_install "poppler-utils (pdftotext, to read invoice PDFs back in the tests)" poppler-utils
}
