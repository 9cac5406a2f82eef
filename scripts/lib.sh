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

wait_for_http() { # url name seconds
  local url=$1 name=$2 secs=${3:-60} i
  for ((i = 0; i < secs * 2; i++)); do
    if any_dead; then log "a process exited while waiting for $name"; return 1; fi
    if node -e "fetch(process.argv[1]).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))" "$url"; then return 0; fi
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

stop_all() {
  local pid
  for pid in "${PIDS[@]:-}"; do [[ -n "$pid" ]] && kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]:-}"; do [[ -n "$pid" ]] && wait "$pid" 2>/dev/null || true; done
  PIDS=()
}

# FerretDB v1 with its SQLite backend: a real MongoDB-wire server in a folder of ours.
start_ferretdb() { # port datadir logfile
  local port=$1 dir=$2 logfile=$3
  mkdir -p "$dir/sqlite" "$dir/state"
  # Its metrics/debug listener would take 127.0.0.1:8088 and clash with a second instance.
  # _txlock=immediate: a write transaction takes SQLite's write lock at BEGIN and waits on the
  # busy timeout, instead of failing with SQLITE_BUSY when a read lock cannot be upgraded.
  local debug_port; debug_port="$(free_port)"
  start_bg "$logfile" "$TOOLS/bin/ferretdb" --debug-addr="127.0.0.1:$debug_port" --handler=sqlite --sqlite-url="file:$dir/sqlite/?_txlock=immediate" \
    --state-dir="$dir/state" --listen-addr="127.0.0.1:$port" --telemetry=disable --log-level=warn >/dev/null
  wait_for_port "$port" ferretdb 60 || { tail -n 20 "$logfile" >&2; return 1; }
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

start_temporal_dev() { # port uiport dbfile logfile [--headless]
  local port=$1 ui=$2 db=$3 logfile=$4; shift 4
  local args=(server start-dev --ip 127.0.0.1 --port "$port" --namespace default --db-filename "$db" --log-level warn)
  if [[ "${1:-}" == "--headless" ]]; then args+=(--headless); else args+=(--ui-port "$ui"); fi
  local sa; for sa in "${SEARCH_ATTRIBUTES[@]}"; do args+=(--search-attribute "$sa"); done
  mkdir -p "$(dirname "$db")"
  start_bg "$logfile" "$TOOLS/bin/temporal" "${args[@]}" >/dev/null
  wait_for_port "$port" temporal 120 || { tail -n 20 "$logfile" >&2; return 1; }
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

# The pay page is tested in a real browser: Debian's chromium, driven by playwright-core.
ensure_chromium() {
  if command -v chromium >/dev/null 2>&1; then return 0; fi
  apt_install "chromium (browser tests of the pay page)" chromium
}
