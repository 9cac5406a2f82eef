#!/usr/bin/env bash
# Runs the Temporal test server (time skipping) from Maven Central: `temporal-test-server.sh <port>`.
# @temporalio/testing starts it through `executable: {type: 'existing-path', path: <this file>}`.
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
exec java -Xss1m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto -Xms64m -Xmx512m -cp "$ROOT/.tools/temporal-test-server/lib/*" io.temporal.testserver.TestServer "$1"
