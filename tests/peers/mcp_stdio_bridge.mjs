// The Streamable HTTP transport in front of a stdio MCP server, so that the MCP conformance
// suite (which reaches servers by URL only) can test `ling mcp serve`. It is a transport, not a
// server: every JSON-RPC message goes through unchanged, both ways. A POSTed request is
// answered with an SSE stream carrying what the server sends about it (its progress
// notifications, its requests) and then its response; a POSTed notification or response gets
// 202. The HTTP status of an error response follows the 2026-07-28 transport: 404 for -32601
// (method not found), 400 for the errors of a bad request (-32602, -32020, -32021, -32022) of
// that revision; a legacy request's error is 200, as the 2025-11-25 transport has it. GET (no
// server-initiated stream) is 405; DELETE is 405 (no HTTP sessions: the stdio server has one
// connection, the bridge's).
//
//   node mcp_stdio_bridge.mjs -- PROGRAM ARGS...     prints "listening http://127.0.0.1:PORT/mcp"

import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { createInterface } from "node:readline";

const sep = process.argv.indexOf("--");
const [program, ...args] = process.argv.slice(sep + 1);
const child = spawn(program, args, { stdio: ["pipe", "pipe", "inherit"] });
child.on("exit", (code) => process.exit(code ?? 1));

// Requests in flight by id: where their messages go.
const waiting = new Map();
// Progress tokens of requests in flight: which request their notifications belong to.
const tokens = new Map();

createInterface({ input: child.stdout }).on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.id !== undefined && message.method === undefined) {
    const stream = waiting.get(JSON.stringify(message.id));
    if (stream) stream.finish(message);
    return;
  }
  // A notification or a request of the server's: to the stream of the request it is about.
  const token = message.params?.progressToken;
  const related =
    (token !== undefined && tokens.get(JSON.stringify(token))) ||
    (message.params?.requestId !== undefined && waiting.get(JSON.stringify(message.params.requestId))) ||
    [...waiting.values()].at(-1);
  related?.send(message);
});

const send = (message) => child.stdin.write(JSON.stringify(message) + "\n");

function status(message, modern) {
  const code = message.error?.code;
  if (code === -32601) return 404;
  if (modern && [-32602, -32020, -32021, -32022].includes(code)) return 400;
  return 200;
}

const server = createServer((req, res) => {
  if (req.method !== "POST") {
    res.writeHead(405, { Allow: "POST" }).end();
    return;
  }
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    let message;
    try {
      message = JSON.parse(body);
    } catch {
      res.writeHead(400, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error" } }));
      return;
    }
    if (message.method === undefined || message.id === undefined) {
      send(message);
      res.writeHead(202).end();
      return;
    }
    // A request of the 2026-07-28 revision: `server/discover`, or one whose _meta speaks it.
    const meta = message.params?._meta ?? {};
    const modern =
      message.method === "server/discover" ||
      Object.keys(meta).some((k) => k.startsWith("io.modelcontextprotocol/"));
    const key = JSON.stringify(message.id);
    const token = message.params?._meta?.progressToken;
    let started = false;
    const start = (first) => {
      started = true;
      res.writeHead(status(first, modern), {
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
      });
    };
    const stream = {
      send(m) {
        if (!started) start(m);
        res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
      },
      finish(m) {
        waiting.delete(key);
        if (token !== undefined) tokens.delete(JSON.stringify(token));
        if (!started) start(m);
        res.end(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
      },
    };
    waiting.set(key, stream);
    if (token !== undefined) tokens.set(JSON.stringify(token), stream);
    res.on("close", () => {
      if (waiting.get(key) === stream && !res.writableEnded) {
        waiting.delete(key);
        send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: message.id } });
      }
    });
    send(message);
  });
});

server.listen(0, "127.0.0.1", () => {
  console.log(`listening http://127.0.0.1:${server.address().port}/mcp`);
});
process.on("SIGTERM", () => {
  child.kill("SIGTERM");
  process.exit(0);
});
