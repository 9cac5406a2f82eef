# The real Temporal server (go.temporal.io/server, TEMPORAL_SERVER_VERSION in tools.env) as a
# second way to run the stack: frontend, history, matching and worker as separate processes on the
# PostgreSQL cluster start_postgres runs (databases `temporal` and `temporal_visibility`), mutual
# TLS on the frontend, and the Web UI's server in front of it. Sourced after lib.sh:
#
#   start_postgres ...                       # PG_SOCKET_DIR
#   start_temporal_cluster <frontend port> <UI port, 0: none> <data dir> <log dir>
#
# Exports TEMPORAL_CLUSTER_CERTS (the folder with ca.pem, client.pem, client.key) and the client
# settings TEMPORAL_TLS_CERT, TEMPORAL_TLS_KEY, TEMPORAL_TLS_CA and TEMPORAL_TLS_SERVER_NAME that
# the API, the worker and the temporal CLI read. Every process goes through start_bg (stop_all
# stops them). A second start on the same data folder reuses the databases, certificates and
# ports, and upgrades the schema if the pinned server is newer.

TEMPORAL_CLUSTER_SERVICES=(history matching frontend worker)

# CA, frontend server certificate (localhost, 127.0.0.1) and one client certificate (API, worker,
# CLI, UI server and the cluster's own system worker). Made once; EC P-256, ten years for the CA,
# two for the leaves.
temporal_cluster_certs() { # dir
  local d=$1
  [[ -s "$d/ca.pem" && -s "$d/frontend.pem" && -s "$d/client.pem" && -s "$d/client.key" ]] && return 0
  mkdir -p "$d" && chmod 700 "$d"
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  (
    cd "$d" && umask 077
    openssl req -x509 "${ec[@]}" -keyout ca.key -out ca.pem -days 3650 -subj "/CN=payments local Temporal CA" \
      -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
    leaf() { # name cn extensions
      openssl req "${ec[@]}" -keyout "$1.key" -out "$1.csr" -subj "/CN=$2" 2>/dev/null
      printf '%b' "$3" > "$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 730 -out "$1.pem" -extfile "$1.ext" 2>/dev/null
      rm -f "$1.csr" "$1.ext"
    }
    leaf frontend localhost 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n'
    leaf client payments-client 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n'
  ) || { log "openssl could not make the cluster's certificates in $d"; return 1; }
}

# The services' internal ports (gRPC and membership of each, the frontend's HTTP port): picked
# free once and kept in <dir>/ports.env, so a restarted service comes back at the address its
# peers know; picked again when one of them is taken by something else. Below 32768: the
# PostgreSQL schema keeps a membership port in a smallint (cluster_membership.rpc_port), and an
# ephemeral port above that stops the service at start ("greater than maximum value for int2").
temporal_cluster_pick_ports() { # count
  node -e '
    const net = require("net");
    const want = Number(process.argv[1]), got = new Set();
    const next = (tries) => {
      if (got.size === want) { console.log([...got].join(" ")); return; }
      if (tries === 0) process.exit(1);
      const port = 20000 + Math.floor(Math.random() * 12000);
      if (got.has(port)) return next(tries - 1);
      const s = net.createServer();
      s.once("error", () => next(tries - 1));
      s.listen(port, "127.0.0.1", () => s.close(() => { got.add(port); next(tries - 1); }));
    };
    next(500);' "$1"
}

temporal_cluster_ports() { # dir
  local f="$1/ports.env" name ok=1
  local names=(FRONTEND_MEMBERSHIP FRONTEND_HTTP HISTORY_GRPC HISTORY_MEMBERSHIP MATCHING_GRPC MATCHING_MEMBERSHIP WORKER_GRPC WORKER_MEMBERSHIP)
  if [[ -s "$f" ]]; then
    # shellcheck disable=SC1090
    source "$f"
    for name in "${names[@]}"; do
      local var="TC_$name"
      if [[ -z "${!var:-}" ]] || port_open "${!var}"; then ok=0; fi
    done
    (( ok )) && return 0
  fi
  local ports i=0; read -r -a ports <<<"$(temporal_cluster_pick_ports "${#names[@]}")"
  (( ${#ports[@]} == ${#names[@]} )) || { log "found no free ports below 32768 for the Temporal services"; return 1; }
  : > "$f"
  for name in "${names[@]}"; do echo "TC_$name=${ports[i++]}" >> "$f"; done
  # shellcheck disable=SC1090
  source "$f"
}

# Databases and schema, as temporalio/auto-setup does: create-database and setup-schema -v 0.0 the
# first time, update-schema (to the newest version the pinned server ships) every time.
temporal_cluster_schema() { # logfile
  local logfile=$1 bin db dir
  bin="$(pg_bindir)"
  local psql=("$bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_SOCKET_DIR" -U postgres -d postgres)
  # The tool connects by TCP address; the `host` connection attribute points it at the socket.
  local tool=("$TOOLS/bin/temporal-sql-tool" --plugin postgres12_pgx --endpoint 127.0.0.1 --port 5432 --user postgres
    --connect-attributes "host=$PG_SOCKET_DIR")
  for db in temporal temporal_visibility; do
    dir="$TOOLS/temporal-server/schema/$([[ $db == temporal ]] && echo temporal || echo visibility)/versioned"
    [[ -d "$dir" ]] || { log "no schema files in $dir: run scripts/install-tools.sh temporal-server"; return 1; }
    if [[ "$(as_pg "${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'")" != 1 ]]; then
      log "creating database $db and its schema"
      "${tool[@]}" --database "$db" create-database >>"$logfile" 2>&1 &&
        "${tool[@]}" --database "$db" setup-schema -v 0.0 >>"$logfile" 2>&1 ||
        { log "could not create the database $db (see $logfile)"; tail -n 20 "$logfile" >&2; return 1; }
    fi
    "${tool[@]}" --database "$db" update-schema -d "$dir" >>"$logfile" 2>&1 ||
      { log "could not update the schema of $db (see $logfile)"; tail -n 20 "$logfile" >&2; return 1; }
  done
}

# The server's config (<dir>/config/cluster.yaml, rewritten at each start: the socket folder and
# ports can change) and its dynamic config.
temporal_cluster_config() { # port dir
  local port=$1 dir=$2 certs="$2/certs" svc
  mkdir -p "$dir/config"
  sql_store() { # database maxConns
    cat <<YAML
      sql:
        pluginName: postgres12_pgx
        databaseName: $1
        connectAddr: "127.0.0.1:5432"
        connectProtocol: tcp
        connectAttributes:
          host: "$PG_SOCKET_DIR"
        user: postgres
        password: ""
        maxConns: $2
        maxIdleConns: $2
        maxConnLifetime: 1h
YAML
  }
  {
    cat <<YAML
# Written by scripts/temporal-cluster.sh at each start; edits are lost.
log:
  stdout: true
  level: ${TEMPORAL_CLUSTER_LOG_LEVEL:-warn}

persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: 4
  datastores:
    postgres-default:
$(sql_store temporal 8)
    postgres-visibility:
$(sql_store temporal_visibility 2)

global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  pprof:
    port: 0
  tls:
    frontend:
      server:
        certFile: $certs/frontend.pem
        keyFile: $certs/frontend.key
        requireClientAuth: true
        clientCaFiles:
          - $certs/ca.pem
      client:
        serverName: localhost
        rootCaFiles:
          - $certs/ca.pem
    systemWorker:
      certFile: $certs/client.pem
      keyFile: $certs/client.key
      client:
        serverName: localhost
        rootCaFiles:
          - $certs/ca.pem

services:
  frontend:
    rpc:
      grpcPort: $port
      membershipPort: $TC_FRONTEND_MEMBERSHIP
      httpPort: $TC_FRONTEND_HTTP
      bindOnIP: 127.0.0.1
  history:
    rpc:
      grpcPort: $TC_HISTORY_GRPC
      membershipPort: $TC_HISTORY_MEMBERSHIP
      bindOnIP: 127.0.0.1
  matching:
    rpc:
      grpcPort: $TC_MATCHING_GRPC
      membershipPort: $TC_MATCHING_MEMBERSHIP
      bindOnIP: 127.0.0.1
  worker:
    rpc:
      grpcPort: $TC_WORKER_GRPC
      membershipPort: $TC_WORKER_MEMBERSHIP
      bindOnIP: 127.0.0.1

clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "localhost:$port"
      httpAddress: "localhost:$TC_FRONTEND_HTTP"

dcRedirectionPolicy:
  policy: noop

publicClient:
  hostPort: "localhost:$port"

dynamicConfigClient:
  filepath: $dir/config/dynamic.yaml
  pollInterval: 10s
YAML
  } > "$dir/config/cluster.yaml"
  # The dev server's own adjustments (temporal CLI, devserver): more list/count requests per second
  # to visibility (the UI, the bench's checks); one task queue partition (one worker process per
  # queue here: no forwarding between partitions).
  cat > "$dir/config/dynamic.yaml" <<'YAML'
# Written by scripts/temporal-cluster.sh at each start; edits are lost.
frontend.namespaceRPS.visibility:
  - value: 100
matching.numTaskqueueReadPartitions:
  - value: 1
matching.numTaskqueueWritePartitions:
  - value: 1
YAML
  unset -f sql_store
}

# The temporal CLI against the cluster, with the client certificate.
temporal_cluster_cli() { # port args...
  local port=$1; shift
  "$TOOLS/bin/temporal" --address "localhost:$port" --tls-cert-path "$TEMPORAL_CLUSTER_CERTS/client.pem" \
    --tls-key-path "$TEMPORAL_CLUSTER_CERTS/client.key" --tls-ca-path "$TEMPORAL_CLUSTER_CERTS/ca.pem" "$@"
}

# The namespace `default` (retention 24 h, as auto-setup) and the project's search attributes
# (SEARCH_ATTRIBUTES, the dev server's --search-attribute list), once each.
temporal_cluster_namespace() { # port logfile
  local port=$1 logfile=$2 i sa created=0
  for ((i = 0; i < 150; i++)); do
    temporal_cluster_cli "$port" operator cluster health >>"$logfile" 2>&1 && break
    if any_dead; then log "a Temporal service exited while starting"; return 1; fi
    sleep 0.4
  done
  (( i < 150 )) || { log "the Temporal cluster did not report healthy within 60s (see $logfile)"; return 1; }
  if ! temporal_cluster_cli "$port" operator namespace describe --namespace default >/dev/null 2>&1; then
    log "creating the Temporal namespace default"
    temporal_cluster_cli "$port" operator namespace create --namespace default --retention 24h >>"$logfile" 2>&1 ||
      { log "could not create the namespace default (see $logfile)"; return 1; }
  fi
  local existing
  for ((i = 0; i < 50; i++)); do
    existing="$(temporal_cluster_cli "$port" operator search-attribute list --namespace default -o json 2>>"$logfile")" && break
    sleep 0.4
  done
  for sa in "${SEARCH_ATTRIBUTES[@]}"; do
    grep -q "\"${sa%%=*}\"" <<<"$existing" && continue
    temporal_cluster_cli "$port" operator search-attribute create --namespace default --name "${sa%%=*}" --type "${sa#*=}" \
      >>"$logfile" 2>&1 || { log "could not create the search attribute ${sa%%=*} (see $logfile)"; return 1; }
    created=1
  done
  # The frontend and history learn of the new aliases at their next namespace refresh (2 s).
  (( created )) && sleep 3
  return 0
}

# The command of one service (into TEMPORAL_CLUSTER_SERVICE_CMD).
temporal_cluster_service_cmd() { # service dir
  TEMPORAL_CLUSTER_SERVICE_CMD=("${GO_SERVER_ENV[@]}" "$TOOLS/bin/temporal-server" --root "$2" --config config \
    --env cluster --allow-no-auth start --service "$1")
}

start_temporal_cluster_service() { # service dir logdir
  local svc=$1 dir=$2 logs=$3
  temporal_cluster_service_cmd "$svc" "$dir"
  start_bg "$logs/temporal-$svc.log" "${TEMPORAL_CLUSTER_SERVICE_CMD[@]}" >/dev/null
}

# One service in place of the calling shell (exec: its pid is the server's), for a harness that
# starts, kills and restarts each service itself (faults/cluster.ts):
#   bash -c 'source scripts/lib.sh; source scripts/temporal-cluster.sh; exec_temporal_cluster_service history <dir>'
exec_temporal_cluster_service() { # service dir
  temporal_cluster_service_cmd "$1" "$2"
  exec "${TEMPORAL_CLUSTER_SERVICE_CMD[@]}"
}

# The Web UI's server (temporal-ui-server) on 127.0.0.1:<uiport>, to the frontend with the client
# certificate.
start_temporal_cluster_ui() { # port uiport dir logdir
  local port=$1 ui=$2 dir=$3 logs=$4 certs="$3/certs"
  mkdir -p "$dir/ui-config"
  cat > "$dir/ui-config/cluster.yaml" <<YAML
# Written by scripts/temporal-cluster.sh at each start; edits are lost.
temporalGrpcAddress: "localhost:$port"
host: 127.0.0.1
port: $ui
enableUi: true
defaultNamespace: default
hideLogs: true
notifyOnNewVersion: false
cors:
  cookieInsecure: true
tls:
  caFile: $certs/ca.pem
  certFile: $certs/client.pem
  keyFile: $certs/client.key
  serverName: localhost
  enableHostVerification: true
YAML
  start_bg "$logs/temporal-ui.log" "$TOOLS/bin/temporal-ui-server" --root "$dir" --config ui-config --env cluster start >/dev/null
  wait_for_port "$ui" "Temporal UI" 60 || { tail -n 20 "$logs/temporal-ui.log" >&2; return 1; }
}

# Certificates, ports, databases and config: what the services need before they start. Needs
# start_postgres first (PG_SOCKET_DIR). Exports the client settings (above).
prepare_temporal_cluster() { # port datadir logdir
  local port=$1 dir=$2 logs=$3
  [[ -n "${PG_SOCKET_DIR:-}" ]] || { log "the Temporal cluster needs start_postgres first"; return 1; }
  [[ -x "$TOOLS/bin/temporal-server" ]] || { log "no .tools/bin/temporal-server: run scripts/install-tools.sh temporal-server"; return 1; }
  mkdir -p "$dir" "$logs"
  temporal_cluster_certs "$dir/certs" || return 1
  export TEMPORAL_CLUSTER_CERTS="$dir/certs"
  temporal_cluster_ports "$dir" || return 1
  temporal_cluster_schema "$logs/temporal-setup.log" || return 1
  temporal_cluster_config "$port" "$dir"
  export TEMPORAL_TLS_CERT="$dir/certs/client.pem" TEMPORAL_TLS_KEY="$dir/certs/client.key" \
    TEMPORAL_TLS_CA="$dir/certs/ca.pem" TEMPORAL_TLS_SERVER_NAME=localhost
}

# Once the services run: the frontend's port, then the namespace and search attributes.
await_temporal_cluster() { # port logdir
  wait_for_port "$1" "Temporal frontend" 120 || { tail -n 20 "$2"/temporal-*.log >&2; return 1; }
  temporal_cluster_namespace "$1" "$2/temporal-setup.log" || { tail -n 20 "$2"/temporal-*.log >&2; return 1; }
}

# Everything above, in order (npm test; npm start supervises each process itself).
start_temporal_cluster() { # port uiport datadir logdir
  local port=$1 ui=$2 dir=$3 logs=$4 svc
  prepare_temporal_cluster "$port" "$dir" "$logs" || return 1
  # History first, alone until it serves: on fresh databases every service writes the cluster
  # metadata record at start, and those that lose that race exit ("SaveClusterMetadata encountered
  # version mismatch"; seen with all four started at once by the bench).
  start_temporal_cluster_service history "$dir" "$logs"
  wait_for_port "$TC_HISTORY_GRPC" "Temporal history" 120 || { tail -n 20 "$logs/temporal-history.log" >&2; return 1; }
  for svc in "${TEMPORAL_CLUSTER_SERVICES[@]}"; do
    [[ "$svc" == history ]] || start_temporal_cluster_service "$svc" "$dir" "$logs"
  done
  await_temporal_cluster "$port" "$logs" || return 1
  if [[ "$ui" != 0 ]]; then start_temporal_cluster_ui "$port" "$ui" "$dir" "$logs" || return 1; fi
}
