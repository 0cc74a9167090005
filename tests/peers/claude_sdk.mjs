// Drives `ling` through the published Claude Agent SDK (@anthropic-ai/claude-agent-sdk), as a
// program written for Claude Code would: tests/suite/claude_sdk.rs runs it with Node.
//
//   node claude_sdk.mjs SDK_ENTRY SCENARIO_JSON
//
// SCENARIO_JSON: {"prompts": ["..." | {"content": [...content blocks]}], "options": {...query
// options...}, "canUseTool": null | {"behavior": "allow" | "deny", ...the answer},
// "interruptOnFirstToolUse": bool,
// "afterFirstTurn": ["mcpServerStatus" | a permission mode to set, ...], "afterLastTurn":
// [{"rewindFiles": N, "dryRun": bool}, ...] (N: the prompt, 0 the first, by the uuid its replayed
// user message came back with; the input stays open until they are done)}. The options
// get `pathToClaudeCodeExecutable: $LING_BIN`. One JSON line per SDK message
// (`{"message": ...}`), per canUseTool call (`{"canUseTool": {...}}`), per control call's answer
// (`{"control": ...}`), then `{"end": "ok"}` or `{"error": "..."}`.
//
// In-process parts, written as programs write them: "helloWorldGuard": true passes the
// PreToolUse write guard of Anthropic's hello-world demo as a callback hook (each call logged as
// `{"hook": {...}}`); "sdkMcpServer": true an in-process MCP server made with
// createSdkMcpServer, `calc`, with one tool `add` (each call logged as `{"sdkTool": {...}}`);
// "agents": {...} goes to the `agents` option as it is.
import path from "node:path";
import { pathToFileURL } from "node:url";

const [, , entry, scenarioText] = process.argv;
const sdk = await import(pathToFileURL(entry).href);
const { query } = sdk;
const scenario = JSON.parse(scenarioText);
const out = (value) => process.stdout.write(JSON.stringify(value) + "\n");

const options = { ...scenario.options, pathToClaudeCodeExecutable: process.env.LING_BIN };
if (scenario.agents) options.agents = scenario.agents;
if (scenario.helloWorldGuard) {
  // As in anthropics/claude-agent-sdk-demos, hello-world: script files only under
  // agent/custom_scripts.
  options.hooks = {
    PreToolUse: [
      {
        matcher: "Write|Edit|MultiEdit",
        hooks: [
          async (input) => {
            const toolName = input.tool_name;
            const toolInput = input.tool_input;
            out({ hook: { event: input.hook_event_name, toolName, filePath: toolInput?.file_path } });
            if (!["Write", "Edit", "MultiEdit"].includes(toolName)) return {};
            const filePath = toolInput.file_path || "";
            const ext = path.extname(filePath).toLowerCase();
            if (ext === ".js" || ext === ".ts") {
              const customScriptsPath = path.join(process.cwd(), "agent", "custom_scripts");
              if (!filePath.startsWith(customScriptsPath)) {
                return {
                  decision: "block",
                  stopReason: `Script files (.js and .ts) must be written to the custom_scripts directory. Please use the path: ${customScriptsPath}/${path.basename(filePath)}`,
                  continue: false,
                };
              }
            }
            return {};
          },
        ],
      },
    ],
  };
}
if (scenario.sdkMcpServer) {
  const { z } = await import(
    pathToFileURL(path.join(path.dirname(entry), "..", "..", "zod", "index.js")).href
  );
  const add = sdk.tool("add", "Adds two numbers", { a: z.number(), b: z.number() }, async (args) => {
    out({ sdkTool: { name: "add", args } });
    return { content: [{ type: "text", text: String(args.a + args.b) }] };
  });
  options.mcpServers = {
    ...(options.mcpServers ?? {}),
    calc: sdk.createSdkMcpServer({ name: "calc", version: "1.0.0", tools: [add] }),
  };
}
if (scenario.canUseTool) {
  options.canUseTool = async (toolName, input, { toolUseID, suggestions, signal }) => {
    out({ canUseTool: { toolName, input, toolUseID, suggestions, aborted: signal.aborted } });
    const answer = { ...scenario.canUseTool };
    if (answer.behavior === "allow" && answer.updatedInput === undefined) {
      answer.updatedInput = input;
    }
    return answer;
  };
}

// Several prompts go as one streamed input: each is sent once the previous turn's result came.
let resultSeen = () => {};
let q = null;
// The uuids of the prompts as they came back (`--replay-user-messages`), in order.
const promptUuids = [];
async function* prompts() {
  for (const text of scenario.prompts) {
    // A prompt is a text, or {"content": [...content blocks]} (an image block, say).
    const content = typeof text === "string" ? [{ type: "text", text }] : text.content;
    yield {
      type: "user",
      session_id: "",
      message: { role: "user", content },
      parent_tool_use_id: null,
    };
    await new Promise((resolve) => (resultSeen = resolve));
  }
  for (const call of scenario.afterLastTurn ?? []) {
    if (call.rewindFiles !== undefined) {
      const uuid = promptUuids[call.rewindFiles];
      out({ control: await q.rewindFiles(uuid, { dryRun: call.dryRun ?? false }) });
    }
  }
}
const prompt =
  scenario.prompts.length === 1 &&
  typeof scenario.prompts[0] === "string" &&
  !scenario.afterLastTurn
    ? scenario.prompts[0]
    : prompts();

try {
  q = query({ prompt, options });
  let interrupted = false;
  let controlled = false;
  for await (const message of q) {
    out({ message });
    const content = message.type === "user" ? message.message?.content : undefined;
    const typed =
      typeof content === "string" ||
      (Array.isArray(content) && content.some((b) => b.type === "text"));
    if (typed && !message.parent_tool_use_id && message.uuid) promptUuids.push(message.uuid);
    // Between the first turn and the next: the control requests of the scenario.
    if (message.type === "result" && scenario.afterFirstTurn && !controlled) {
      controlled = true;
      for (const call of scenario.afterFirstTurn) {
        if (call === "mcpServerStatus") out({ control: await q.mcpServerStatus() });
        else if (call === "supportedCommands") out({ control: await q.supportedCommands() });
        else if (call === "supportedAgents") out({ control: await q.supportedAgents() });
        else out({ control: await q.setPermissionMode(call) });
      }
    }
    if (
      scenario.interruptOnFirstToolUse &&
      !interrupted &&
      message.type === "assistant" &&
      message.message.content.some((b) => b.type === "tool_use")
    ) {
      interrupted = true;
      out({ control: (await q.interrupt()) ?? "interrupted" });
    }
    if (message.type === "result") resultSeen();
  }
  out({ end: "ok" });
} catch (e) {
  out({ error: String(e && e.message ? e.message : e) });
}
