#!/usr/bin/env python3
"""A loopback model and OTLP collector for the fleet benchmarks (scripts/bench-fleet.sh,
bench-telemetry.sh, bench-replay.sh): POST .../chat/completions streams an answer (a `bash`
tool call until the request holds TURNS-1 tool results, then text: TURNS model requests a
session); POST /v1/traces|metrics|logs is counted and answered 200 {}. Prints its port, then
serves until killed; on SIGTERM writes its counts as JSON to the file named by --counts."""
import argparse, json, signal, sys, threading
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

parser = argparse.ArgumentParser()
parser.add_argument("--turns", type=int, default=1)
parser.add_argument("--counts", default=None)
args = parser.parse_args()
counts = {"model": 0, "traces": 0, "metrics": 0, "logs": 0}
lock = threading.Lock()


def chunk(delta, finish=None):
    return "data: " + json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 0,
                                  "model": "mock", "choices": [{"index": 0, "delta": delta,
                                                                "finish_reason": finish}]}) + "\n\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # A response goes out in one write, without Nagle: headers and body written apart (the
    # default, unbuffered) meet the client's delayed ACK and cost 40 ms per exchange, which real
    # servers and collectors do not.
    wbufsize = 1 << 16
    disable_nagle_algorithm = True

    def log_message(self, *a):
        pass

    def do_GET(self):
        self.reply(404, "application/json", b"{}")

    def reply(self, status, kind, body):
        self.send_response(status)
        self.send_header("content-type", kind)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        path = self.path.split("?")[0]
        for signal_name in ("traces", "metrics", "logs"):
            if path.endswith("/v1/" + signal_name):
                with lock:
                    counts[signal_name] += 1
                return self.reply(200, "application/json", b"{}")
        if not path.endswith("/chat/completions"):
            return self.reply(404, "application/json", b"{}")
        with lock:
            counts["model"] += 1
        messages = json.loads(body).get("messages", [])
        done = sum(1 for m in messages if m.get("role") == "tool")
        if done + 1 < args.turns:
            call = {"tool_calls": [{"index": 0, "id": f"call{done}", "type": "function",
                                    "function": {"name": "bash",
                                                 "arguments": json.dumps({"command": f"echo step {done}"})}}]}
            events = [chunk({"role": "assistant", "content": ""}), chunk(call), chunk({}, "tool_calls")]
        else:
            events = [chunk({"role": "assistant", "content": ""}), chunk({"content": "done"}),
                      chunk({}, "stop")]
        usage = {"id": "c", "object": "chat.completion.chunk", "choices": [],
                 "usage": {"prompt_tokens": 100, "completion_tokens": 10}}
        events.append("data: " + json.dumps(usage) + "\n\n")
        events.append("data: [DONE]\n\n")
        self.reply(200, "text/event-stream", "".join(events).encode())


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
server.request_queue_size = 256


def stop(*_):
    if args.counts:
        with open(args.counts, "w") as f:
            json.dump(counts, f)
    sys.exit(0)


signal.signal(signal.SIGTERM, stop)
print(server.server_address[1], flush=True)
server.serve_forever()
