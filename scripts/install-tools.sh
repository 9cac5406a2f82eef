#!/usr/bin/env bash
# Installs the pinned Temporal CLI, FerretDB, kubeconform and Temporal test server into .tools/
# (git-ignored).
# Idempotent: anything already present at the pinned version is skipped.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
source "$ROOT/scripts/tools.env"
TOOLS="$ROOT/.tools"
mkdir -p "$TOOLS/bin"
log() { printf '[install] %s\n' "$*" >&2; }

need_go_tool() { # name module-root package-dir version
  local name=$1 module_root=$2 pkg=$3 version=$4 stamp="$TOOLS/bin/.$1.version"
  if [[ -x "$TOOLS/bin/$name" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
    return 0
  fi
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
  rm -rf "$work"
  echo "$version" > "$stamp"
  log "$name $version ready"
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
  test-server) install_test_server ;;
  all)
    need_go_tool ferretdb github.com/FerretDB/FerretDB cmd/ferretdb "$FERRETDB_VERSION"
    need_go_tool temporal github.com/temporalio/cli cmd/temporal "$TEMPORAL_CLI_VERSION"
    need_go_tool kubeconform github.com/yannh/kubeconform cmd/kubeconform "$KUBECONFORM_VERSION"
    install_test_server ;;
  *) log "usage: install-tools.sh [all|temporal|ferretdb|kubeconform|test-server]"; exit 2 ;;
esac
