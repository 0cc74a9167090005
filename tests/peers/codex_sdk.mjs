// Drives `ling` through the published Codex SDK (@openai/codex-sdk), as a program written for
// Codex would: tests/suite/codex_sdk.rs runs it with Node.
//
//   node codex_sdk.mjs SDK_ENTRY SCENARIO_JSON
//
// SCENARIO_JSON: {"codex": {...Codex options...}, "thread": {...thread options...},
// "resume": THREAD_ID (optional: resumeThread instead of startThread), "turns": [{"input":
// "...", "streamed": bool, "outputSchema": {...}}]}. The Codex options get `codexPathOverride:
// $LING_BIN`. One JSON line per streamed event (`{"event": ...}`), per `run()` result
// (`{"turn": {items, finalResponse, usage}}`), the thread's id after each turn (`{"thread_id"}`),
// then `{"end": "ok"}` or `{"error": "..."}`.
import { pathToFileURL } from "node:url";

const [, , entry, scenarioText] = process.argv;
const { Codex } = await import(pathToFileURL(entry).href);
const scenario = JSON.parse(scenarioText);
const out = (value) => process.stdout.write(JSON.stringify(value) + "\n");

try {
  const codex = new Codex({ ...scenario.codex, codexPathOverride: process.env.LING_BIN });
  const thread = scenario.resume
    ? codex.resumeThread(scenario.resume, scenario.thread ?? {})
    : codex.startThread(scenario.thread ?? {});
  for (const turn of scenario.turns) {
    const options = turn.outputSchema ? { outputSchema: turn.outputSchema } : {};
    if (turn.streamed) {
      const { events } = await thread.runStreamed(turn.input, options);
      for await (const event of events) {
        out({ event });
      }
    } else {
      out({ turn: await thread.run(turn.input, options) });
    }
    out({ thread_id: thread.id });
  }
  out({ end: "ok" });
} catch (e) {
  out({ error: String(e?.message ?? e) });
}
