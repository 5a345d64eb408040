#!/usr/bin/env bash
# `slmcode mcp` vs the reference MCP server `@modelcontextprotocol/server-filesystem` (Node),
# over stdio from one Rust client, in one run: start-up and p50/p99 of 2,000 sequential reads.
# Installs the reference server under target/bench-node (not committed).
set -euo pipefail
cd "$(dirname "$0")/.."

ref_version=2026.8.31
node_dir=target/bench-node
if [ ! -f "$node_dir/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" ]; then
  mkdir -p "$node_dir"
  npm install --silent --prefix "$node_dir" "@modelcontextprotocol/server-filesystem@$ref_version"
fi

cargo build --release --locked -p slmcode
SLMCODE_BIN="$PWD/target/release/slmcode" \
NODE_FS_SERVER="$PWD/$node_dir/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js" \
  cargo bench --locked -p slmcode-agent --bench mcp_stdio
