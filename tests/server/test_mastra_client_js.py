"""Interoperability: the official ``@mastra/client-js`` (from the npm registry) drives a Warden server.

``tests/server/js`` holds a ``package.json`` + ``package-lock.json``; ``npm ci`` there installs the
client (CI does it; it runs on Node 20 with an engines warning). Outside CI (env ``CI`` unset) the
test is skipped when ``node_modules`` is missing; in CI it fails.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.server.helpers import TOKEN
from tests.server.procs import HERE

JS = HERE / "js"
CLIENT = JS / "node_modules" / "@mastra" / "client-js" / "package.json"


def _require_node_client() -> str:
    node = shutil.which("node")
    missing = None
    if node is None:
        missing = "node is not on PATH"
    elif not CLIENT.exists():
        missing = f"{CLIENT.parent} is missing: run `npm ci` in {JS}"
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"@mastra/client-js interop test cannot run in CI: {missing}")
        pytest.skip(missing)
    assert node is not None
    return node


def test_mastra_client_js_drives_warden(server, servers):
    node = _require_node_client()
    version = json.loads(CLIENT.read_text())["version"]
    env = dict(os.environ, WARDEN_URL=server.url, WARDEN_TOKEN=TOKEN)
    r = subprocess.run([node, "drive.mjs"], cwd=JS, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"client-js {version} failed:\n{r.stderr}\n{r.stdout[-2000:]}"
    # client-js parses each event with JSON.parse and logs a parse error for any it cannot read
    assert "JSON parse error" not in r.stderr
    out = json.loads(r.stdout)

    # stream with requireToolApproval, read with processDataStream
    stream = out["stream"]
    assert stream[0]["type"] == "start"
    approval = stream[-1]
    assert approval["type"] == "tool-call-approval"
    assert approval["payload"]["toolName"] == "lookup" and approval["payload"]["args"] == {"q": "cats"}

    # listSuspendedRuns
    listed = out["listSuspendedRuns"]
    assert listed["total"] == 1
    run = listed["runs"][0]
    assert run["runId"] == approval["runId"] and run["status"] == "suspended"
    assert run["threadId"] == "t-js" and run["resourceId"] == "u-js"
    assert run["toolCalls"][0]["toolCallId"] == approval["payload"]["toolCallId"]
    assert run["toolCalls"][0]["requiresApproval"] is True

    # approveToolCall: the tool ran, the run finished; a second approval is a 409 MastraClientError
    approved = out["approveToolCall"]
    result = next(c for c in approved if c["type"] == "tool-result")
    assert result["payload"]["result"] == {"found": "cats"}
    assert approved[-1]["type"] == "finish"
    again = out["approveAgain"]
    assert again["name"] == "MastraClientError" and again["status"] == 409
    assert again["body"]["error"]["code"] == "AGENT_TOOL_CALL_ALREADY_DECIDED"

    # declineToolCall
    declined = out["declineToolCall"]
    assert any(c["type"] == "tool-output-denied" for c in declined)
    assert not any(c["type"] == "tool-result" for c in declined)
    assert declined[-1]["type"] == "finish"

    # resumeStream
    assert out["suspended"]["payload"]["suspendPayload"] == {"question": "favourite colour?"}
    resumed = out["resumeStream"]
    assert next(c for c in resumed if c["type"] == "tool-result")["payload"]["result"] == {"answer": "blue"}
    assert resumed[-1]["type"] == "finish"

    # generate, then approveToolCallGenerate
    gen = out["generate"]
    assert gen["finishReason"] == "suspended" and gen["suspendPayload"]["args"] == {"id": "js-generate"}
    done = out["approveToolCallGenerate"]
    assert done["finishReason"] == "stop" and done["text"] == 'done: {"deleted": "js-generate"}'

    assert out["unknownAgent"]["status"] == 404
    assert out["remaining"]["total"] == 0

    rows = sorted((r[0], r[2]) for r in servers.executions())
    assert rows == [
        ("ask-user", '{"answer": "blue"}'),
        ("delete-record", '{"id": "js-generate"}'),
        ("lookup", '{"q": "cats"}'),
    ]
