// Drives a Warden server with the official @mastra/client-js, reading chunks with its own
// processDataStream. Prints one JSON object with what each call returned; the Python test
// (tests/server/test_mastra_client_js.py) checks it.
// Usage: WARDEN_URL=http://127.0.0.1:PORT WARDEN_TOKEN=... node drive.mjs
import { MastraClient } from "@mastra/client-js";

const baseUrl = process.env.WARDEN_URL;
const token = process.env.WARDEN_TOKEN;
const client = new MastraClient({ baseUrl, headers: { Authorization: `Bearer ${token}` }, retries: 0 });
const agent = client.getAgent("ops");

async function collect(response) {
  const chunks = [];
  await response.processDataStream({
    onChunk: async (chunk) => {
      chunks.push(chunk);
    },
  });
  return chunks;
}

async function failure(fn) {
  try {
    await fn();
    return null;
  } catch (err) {
    return { name: err.name, status: err.status, body: err.body };
  }
}

const out = {};

// stream with requireToolApproval: the ungated "lookup" tool stops for approval
const first = await collect(
  await agent.stream("lookup cats", { requireToolApproval: true, memory: { thread: "t-js", resource: "u-js" } }),
);
out.stream = first;
const approval = first.find((c) => c.type === "tool-call-approval");

out.listSuspendedRuns = await agent.listSuspendedRuns({ threadId: "t-js", resourceId: "u-js" });

out.approveToolCall = await collect(
  await agent.approveToolCall({ runId: approval.runId, toolCallId: approval.payload.toolCallId }),
);
out.approveAgain = await failure(() =>
  agent.approveToolCall({ runId: approval.runId, toolCallId: approval.payload.toolCallId }),
);

// declineToolCall on a tool with requireApproval: true
const second = await collect(await agent.stream("delete js-record", { memory: { thread: "t-js2", resource: "u-js" } }));
const approval2 = second.find((c) => c.type === "tool-call-approval");
out.declineToolCall = await collect(
  await agent.declineToolCall({ runId: approval2.runId, toolCallId: approval2.payload.toolCallId }),
);

// resumeStream on a tool that suspended during execution
const third = await collect(await agent.stream("ask favourite colour?", { memory: { thread: "t-js3" } }));
const suspended = third.find((c) => c.type === "tool-call-suspended");
out.suspended = suspended;
out.resumeStream = await collect(
  await agent.resumeStream({ answer: "blue" }, { runId: suspended.runId, toolCallId: suspended.payload.toolCallId }),
);

// generate, then approveToolCallGenerate
const generated = await agent.generate("delete js-generate", { memory: { thread: "t-js4" } });
out.generate = generated;
out.approveToolCallGenerate = await agent.approveToolCallGenerate({
  runId: generated.runId,
  toolCallId: generated.suspendPayload.toolCallId,
});

out.unknownAgent = await failure(() => client.getAgent("nobody").listSuspendedRuns());
out.remaining = await agent.listSuspendedRuns();

console.log(JSON.stringify(out));
