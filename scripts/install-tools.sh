#!/usr/bin/env bash
# Installs the pinned Temporal CLI, FerretDB, kubeconform, grafana-dashboard-check, Temporal server
# (with its schema tool and Web UI server) and Temporal test server into .tools/
# (git-ignored).
# Idempotent: anything already present at the pinned version is skipped.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
source "$ROOT/scripts/tools.env"
TOOLS="$ROOT/.tools"
mkdir -p "$TOOLS/bin"
log() { printf '[install] %s\n' "$*" >&2; }

# Builds ./<package-dir> of <module-root>@<version> into .tools/bin/<name>. More binaries from the
# same download: extra `package-dir=name` pairs. NEED_GO_TOOL_AFTER: a function run in the
# module's copy before it is removed (it gets the copy's path), e.g. to keep schema files.
need_go_tool() { # name module-root package-dir version [package-dir=name ...]
  local name=$1 module_root=$2 pkg=$3 version=$4 stamp="$TOOLS/bin/.$1.version"
  shift 4
  local extra=("$@") pair
  local ready=1
  [[ -x "$TOOLS/bin/$name" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]] || ready=0
  for pair in "${extra[@]}"; do [[ -x "$TOOLS/bin/${pair#*=}" ]] || ready=0; done
  (( ready )) && return 0
  command -v go >/dev/null || { log "go is required to build $name"; exit 1; }
  log "building $name $version (first run takes a few minutes)..."
  # Build from the downloaded module rather than `go install mod@ver`: the module proxy here
  # refuses version listings, which `go install` asks for (deprecation check).
  local src
  src="$(go mod download -json "$module_root@$version" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [[ -n "$src" ]] || { log "could not download $module_root@$version"; exit 1; }
  # Build in a writable copy: FerretDB embeds build/version/version.txt, which its release
  # tooling writes and the module does not ship.
  local work="$TOOLS/src/$name-$version"
  rm -rf "$work" && mkdir -p "$TOOLS/src" && cp -r "$src" "$work" && chmod -R u+w "$work"
  [[ -d "$work/build/version" ]] && echo "$version" > "$work/build/version/version.txt"
  (cd "$work" && GOFLAGS="-buildvcs=false -mod=mod" go build -trimpath -o "$TOOLS/bin/$name" "./$pkg")
  for pair in "${extra[@]}"; do
    (cd "$work" && GOFLAGS="-buildvcs=false -mod=mod" go build -trimpath -o "$TOOLS/bin/${pair#*=}" "./${pair%%=*}")
  done
  if [[ -n "${NEED_GO_TOOL_AFTER:-}" ]]; then "$NEED_GO_TOOL_AFTER" "$work"; fi
  rm -rf "$work"
  echo "$version" > "$stamp"
  log "$name $version ready"
}

# The real Temporal server (npm run start:cluster, and the cluster job of npm test): frontend,
# history, matching and worker services from one binary, its SQL schema tool, the schema files the
# tool applies (.tools/temporal-server/schema), and the Web UI's server (temporal-ui-server, the
# version the pinned CLI embeds in its dev server).
keep_temporal_schema() { # module copy
  rm -rf "$TOOLS/temporal-server/schema" && mkdir -p "$TOOLS/temporal-server"
  cp -r "$1/schema/postgresql/v12" "$TOOLS/temporal-server/schema"
}
install_temporal_server() {
  [[ -d "$TOOLS/temporal-server/schema/temporal/versioned" ]] || rm -f "$TOOLS/bin/.temporal-server.version"
  NEED_GO_TOOL_AFTER=keep_temporal_schema need_go_tool temporal-server go.temporal.io/server cmd/server \
    "$TEMPORAL_SERVER_VERSION" cmd/tools/sql=temporal-sql-tool
  need_go_tool temporal-ui-server github.com/temporalio/ui-server/v2 cmd/server "$TEMPORAL_UI_SERVER_VERSION"
}

# grafana-dashboard-check (scripts/grafana-dashboard-check): the project's own small checker of
# deploy/grafana on the Grafana Foundation SDK, at the version its go.mod pins (go.sum checked; no
# other module is taken). Rebuilt when its sources change.
install_dashboard_check() {
  local src="$ROOT/scripts/grafana-dashboard-check" name=grafana-dashboard-check version
  version="$(cat "$src/go.mod" "$src/go.sum" "$src/main.go" | sha256sum | cut -c1-16)"
  [[ -x "$TOOLS/bin/$name" && -f "$TOOLS/bin/.$name.version" && "$(cat "$TOOLS/bin/.$name.version")" == "$version" ]] && return 0
  command -v go >/dev/null || { log "go is required to build $name"; exit 1; }
  log "building $name ($version)..."
  (cd "$src" && GOFLAGS="-buildvcs=false -mod=readonly" go build -trimpath -o "$TOOLS/bin/$name" .)
  echo "$version" > "$TOOLS/bin/.$name.version"
  log "$name ready"
}

install_test_server() {
  local dir="$TOOLS/temporal-test-server" stamp="$TOOLS/temporal-test-server/.version"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$TEMPORAL_TEST_SERVER_VERSION" ]]; then return 0; fi
  command -v mvn >/dev/null || { log "mvn is required for the Temporal test server"; exit 1; }
  log "fetching io.temporal:temporal-test-server:$TEMPORAL_TEST_SERVER_VERSION with maven..."
  rm -rf "$dir" && mkdir -p "$dir/lib"
  sed "s/@VERSION@/$TEMPORAL_TEST_SERVER_VERSION/" "$ROOT/scripts/temporal-test-server.pom.xml" > "$dir/pom.xml"
  mvn -q -B -f "$dir/pom.xml" dependency:copy-dependencies -DoutputDirectory="$dir/lib" -DincludeScope=runtime
  echo "$TEMPORAL_TEST_SERVER_VERSION" > "$stamp"
  log "temporal test server ready"
}

what="${1:-all}"
case "$what" in
  temporal) need_go_tool temporal github.com/temporalio/cli cmd/temporal "$TEMPORAL_CLI_VERSION" ;;
  ferretdb) need_go_tool ferretdb github.com/FerretDB/FerretDB cmd/ferretdb "$FERRETDB_VERSION" ;;
  kubeconform) need_go_tool kubeconform github.com/yannh/kubeconform cmd/kubeconform "$KUBECONFORM_VERSION" ;;
  grafana-dashboard-check) install_dashboard_check ;;
  temporal-server) install_temporal_server ;;
  test-server) install_test_server ;;
  all)
    need_go_tool ferretdb github.com/FerretDB/FerretDB cmd/ferretdb "$FERRETDB_VERSION"
    need_go_tool temporal github.com/temporalio/cli cmd/temporal "$TEMPORAL_CLI_VERSION"
    need_go_tool kubeconform github.com/yannh/kubeconform cmd/kubeconform "$KUBECONFORM_VERSION"
    install_dashboard_check
    install_temporal_server
    install_test_server ;;
  *) log "usage: install-tools.sh [all|temporal|temporal-server|ferretdb|kubeconform|grafana-dashboard-check|test-server]"; exit 2 ;;
esac
