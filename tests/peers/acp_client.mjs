// An ACP client written against the published @agentclientprotocol/sdk (its app API:
// `client()`, `onRequest`, `onNotification`, `connectWith`, `ndJsonStream`), as an editor would
// be: it starts the agent, answers its permission questions, serves its fs/* requests from
// "editor buffers", runs its terminal/* commands, and records everything it saw.
//
// The Rust suite (tests/suite/acp.rs) runs it with Node 22:
//   node acp_client.mjs            with ACP_SDK = the SDK's entry file, ACP_SCENARIO = JSON:
//   { "agent": [program, ...args], "cwd": "/abs", "env": {...},
//     "capabilities": { "fs": true, "terminal": false },
//     "buffers": { "/abs/file": "text the editor holds" },   // fs/read_text_file serves these
//     "saveToDisk": true,      // fs/write_text_file also saves the file, following links as editors do
//     "swapOnRead": { "read": 3, "path": "/abs/dir", "target": "/elsewhere" },
//                              // the 3rd fs/read_text_file, once answered, moves dir aside and
//                              // puts a symlink to target in its place (a command racing the agent)
//     "steps": [ { "op": "new", "mcpServers": [] },
//                { "op": "prompt", "text": "...", "answers": ["allow_once", "reject_once"],
//                  (each an option's kind, or an option's id: "choice_2")
//                  "cancelAfterChunks": 2 },
//                { "op": "set_mode", "mode": "plan" }, { "op": "set_model", "model": "m" },
//                { "op": "load", "session": "previous" }, { "op": "resume", "sessionId": "..." },
//                { "op": "list" }, { "op": "close" } ] }
// and prints one JSON object on stdout: { initialize, log: [...] }. A step that fails is logged
// with its error and the run goes on; the process exits 0 unless the connection itself broke.

import { spawn } from "node:child_process";
import { readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const acp = await import(pathToFileURL(process.env.ACP_SDK).href);
const scenario = JSON.parse(process.env.ACP_SCENARIO);

const log = [];
const started = performance.now();
const now = () => Math.round((performance.now() - started) * 1000) / 1000;
const record = (entry) => log.push({ at: now(), ...entry });

const buffers = new Map(Object.entries(scenario.buffers ?? {}));
let answers = [];
let chunksSeen = 0;
let cancelAfter = null;
let currentSession = null;
let agentContext = null;
const terminals = new Map();
let nextTerminal = 1;
let reads = 0;

const app = acp
  .client({ name: "ling-acp-test-client" })
  .onNotification(acp.methods.client.session.update, async ({ params }) => {
    record({ kind: "update", sessionId: params.sessionId, update: params.update });
    if (params.update.sessionUpdate === "agent_message_chunk") {
      chunksSeen += 1;
      if (cancelAfter !== null && chunksSeen >= cancelAfter) {
        cancelAfter = null;
        record({ kind: "cancel" });
        await agentContext.notify(acp.methods.agent.session.cancel, {
          sessionId: params.sessionId,
        });
      }
    }
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    const want = answers.shift() ?? "cancelled";
    // An answer names an option's kind, or one option by its id.
    const option = params.options.find((o) => o.optionId === want) ??
      params.options.find((o) => o.kind === want);
    const outcome = option
      ? { outcome: "selected", optionId: option.optionId }
      : { outcome: "cancelled" };
    record({ kind: "permission", params, answer: outcome });
    return { outcome };
  })
  .onRequest(acp.methods.client.fs.readTextFile, async ({ params }) => {
    let content = buffers.has(params.path)
      ? buffers.get(params.path)
      : readFileSync(params.path, "utf8");
    record({ kind: "fs_read", params });
    reads += 1;
    const swap = scenario.swapOnRead;
    if (swap && swap.read === reads) {
      renameSync(swap.path, `${swap.path}.moved`);
      symlinkSync(swap.target, swap.path);
      record({ kind: "swapped", path: swap.path, target: swap.target });
    }
    return { content };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, async ({ params }) => {
    // An editor puts the text in its buffer; this one keeps it in memory, not on disk.
    buffers.set(params.path, params.content);
    if (scenario.saveToDisk) writeFileSync(params.path, params.content);
    record({ kind: "fs_write", params });
    return {};
  })
  .onRequest(acp.methods.client.terminal.create, async ({ params }) => {
    const id = `term-${nextTerminal++}`;
    const env = { ...process.env };
    for (const v of params.env ?? []) env[v.name] = v.value;
    const child = spawn(params.command, params.args ?? [], {
      cwd: params.cwd ?? scenario.cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const term = { child, output: "", exit: null, waiters: [] };
    const take = (chunk) => (term.output += chunk.toString());
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    child.on("close", (code, signal) => {
      term.exit = { exitCode: code, signal: signal ?? null };
      for (const w of term.waiters) w(term.exit);
    });
    terminals.set(id, term);
    record({ kind: "terminal_create", params, terminalId: id });
    return { terminalId: id };
  })
  .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
    const term = terminals.get(params.terminalId);
    const exit = term.exit ?? (await new Promise((resolve) => term.waiters.push(resolve)));
    return exit;
  })
  .onRequest(acp.methods.client.terminal.output, async ({ params }) => {
    const term = terminals.get(params.terminalId);
    return { output: term.output, truncated: false, exitStatus: term.exit };
  })
  .onRequest(acp.methods.client.terminal.kill, async ({ params }) => {
    terminals.get(params.terminalId)?.child.kill("SIGKILL");
    record({ kind: "terminal_kill", params });
    return {};
  })
  .onRequest(acp.methods.client.terminal.release, async ({ params }) => {
    terminals.get(params.terminalId)?.child.kill("SIGKILL");
    terminals.delete(params.terminalId);
    record({ kind: "terminal_release", params });
    return {};
  });

const [program, ...args] = scenario.agent;
const agent = spawn(program, args, {
  cwd: scenario.cwd,
  env: { ...process.env, ...(scenario.env ?? {}) },
  stdio: ["pipe", "pipe", "pipe"],
});
let stderr = "";
agent.stderr.on("data", (d) => (stderr += d.toString()));
const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));

const sessions = [];
let initialize = null;
try {
  await app.connectWith(stream, async (ctx) => {
    agentContext = ctx;
    initialize = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {
        fs: {
          readTextFile: scenario.capabilities?.fs ?? false,
          writeTextFile: scenario.capabilities?.fs ?? false,
        },
        terminal: scenario.capabilities?.terminal ?? false,
      },
      clientInfo: { name: "ling-acp-test-client", version: "1.0.0" },
    });
    for (const step of scenario.steps) {
      const t0 = now();
      try {
        const result = await runStep(ctx, step);
        record({ kind: "response", op: step.op, sent: t0, result });
      } catch (error) {
        record({
          kind: "response",
          op: step.op,
          sent: t0,
          error: { code: error.code, message: error.message, data: error.data },
        });
      }
    }
  });
} catch (error) {
  record({ kind: "connection_error", message: String(error?.stack ?? error) });
}
agent.stdin.end();
const exit = await new Promise((resolve) => {
  if (agent.exitCode !== null) return resolve(agent.exitCode);
  const timer = setTimeout(() => {
    agent.kill("SIGKILL");
    resolve("killed after 10 s");
  }, 10_000);
  agent.on("exit", (code, signal) => {
    clearTimeout(timer);
    resolve(code ?? signal);
  });
});
process.stdout.write(
  JSON.stringify({ initialize, log, sessions, agentExit: exit, agentStderr: stderr }) + "\n",
);

async function runStep(ctx, step) {
  switch (step.op) {
    case "new": {
      const result = await ctx.request(acp.methods.agent.session.new, {
        cwd: step.cwd ?? scenario.cwd,
        mcpServers: step.mcpServers ?? [],
      });
      currentSession = result.sessionId;
      sessions.push(result.sessionId);
      return result;
    }
    case "load": {
      const sessionId = step.sessionId ?? sessions[0];
      const result = await ctx.request(acp.methods.agent.session.load, {
        sessionId,
        cwd: step.cwd ?? scenario.cwd,
        mcpServers: step.mcpServers ?? [],
      });
      currentSession = sessionId;
      return result ?? null;
    }
    case "resume": {
      const result = await ctx.request(acp.methods.agent.session.resume, {
        sessionId: step.sessionId,
        cwd: step.cwd ?? scenario.cwd,
        mcpServers: step.mcpServers ?? [],
      });
      currentSession = step.sessionId;
      return result ?? null;
    }
    case "prompt": {
      answers = [...(step.answers ?? [])];
      chunksSeen = 0;
      cancelAfter = step.cancelAfterChunks ?? null;
      return await ctx.request(acp.methods.agent.session.prompt, {
        sessionId: step.sessionId ?? currentSession,
        prompt: step.prompt ?? [{ type: "text", text: step.text }],
      });
    }
    case "set_mode":
      return (
        (await ctx.request(acp.methods.agent.session.setMode, {
          sessionId: currentSession,
          modeId: step.mode,
        })) ?? null
      );
    case "set_model":
      return await ctx.request(acp.methods.agent.session.setConfigOption, {
        sessionId: currentSession,
        configId: "model",
        value: step.model,
      });
    case "list":
      return await ctx.request(acp.methods.agent.session.list, { cwd: scenario.cwd });
    case "close":
      return (
        (await ctx.request(acp.methods.agent.session.close, { sessionId: currentSession })) ??
        null
      );
    case "sleep":
      await new Promise((resolve) => setTimeout(resolve, step.ms));
      return null;
    default:
      throw new Error(`unknown step ${step.op}`);
  }
}
