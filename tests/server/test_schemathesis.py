"""Property-based fuzzing of the HTTP API with schemathesis, against a real ``python -m warden_server``.

For every operation of ``/openapi.json`` schemathesis generates valid and
invalid requests (bodies, query strings, path ids); each answer must be no
server error (no 5xx) and conform to the document: a documented status, the
documented content type, and a JSON body that validates against the
documented schema. Run with a token (every request carries it) and without.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.server.helpers import TOKEN, auth
from tests.server.procs import ServerFactory

# Per operation and generation mode; 15 operations x 2 modes x 2 servers. Kept small enough for
# the whole test to stay well under a minute on a shared two-core machine.
EXAMPLES = 25
EVENTS_PATH = "/api/events"
AGENTS = ["ops", "other", "guarded", "boss"]
# Messages the test app's model acts on: gated calls, suspensions, a failing model, delegation.
PROMPTS = ["delete 1", "lookup x", "ask name", "boom", "delegate delete 2", "hi"]
FRAMING = {"content-length", "transfer-encoding", "host", "connection"}
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module", params=["token", "no-token"])
def live(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str | None]]:
    token = TOKEN if request.param == "token" else None
    factory = ServerFactory(tmp_path_factory.mktemp(f"fuzz-{request.param}"))
    server = factory.start("fuzz", token=token)
    try:
        yield server.url, token
    finally:
        factory.stop_all()
        log = server.log()
        assert "Traceback" not in log, log[-4000:]


def test_fuzz_every_operation(live: tuple[str, str | None]) -> None:
    url, token = live
    headers = auth(token) if token else {}
    schema = schemathesis.openapi.from_url(f"{url}/openapi.json", headers=headers, timeout=30)
    # ``GET /api/events`` never ends (a live feed), so it cannot be fuzzed example by example:
    # ``test_events_stream_matches_its_schema`` checks what it sends against the same document.
    operations = [r.ok() for r in schema.get_all_operations() if r.ok().label != f"GET {EVENTS_PATH}"]
    # Real pending runs (an approval, a suspension), so run ids are sometimes ones the server knows.
    run_ids: list[str] = []
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client:
        for prompt in ("delete 7", "ask color", "delete 8"):
            r = client.post("/api/agents/ops/generate", json={"messages": prompt, "threadId": "fuzz"})
            assert r.status_code == 200, r.text
            run_ids.append(r.json()["runId"])
    assert len(operations) >= 14
    calls: dict[str, int] = {}
    statuses: dict[int, int] = {}

    for op in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            strategy: Any = op.as_strategy(generation_mode=mode)

            @settings(
                max_examples=EXAMPLES,
                deadline=None,
                database=None,
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=strategy, data=st.data())
            def run(case: Any, data: Any) -> None:
                # Mostly aim at real agents, runs and prompts; schemathesis's own values stay in the mix.
                params = case.path_parameters or {}
                if "agentId" in params and data.draw(st.booleans()):
                    params["agentId"] = data.draw(st.sampled_from(AGENTS))
                if "runId" in params and data.draw(st.booleans()):
                    params["runId"] = data.draw(st.sampled_from(run_ids))
                if isinstance(case.body, dict) and data.draw(st.booleans()):
                    if "runId" in case.body:
                        case.body["runId"] = data.draw(st.sampled_from(run_ids))
                    if "messages" in case.body:
                        case.body["messages"] = data.draw(st.sampled_from(PROMPTS))
                # Framing headers belong to the HTTP client: a fuzzed ``Content-Length: ''`` is not
                # an HTTP request, and uvicorn's parser answers it (text/plain 400) before Warden runs.
                if case.headers:
                    for name in [n for n in case.headers if n.lower() in FRAMING]:
                        del case.headers[name]
                response = case.call_and_validate(base_url=url, headers=headers, checks=CHECKS, timeout=30)
                calls[case.operation.label] = calls.get(case.operation.label, 0) + 1
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1

            try:
                run()
            except Unsatisfiable:  # nothing to make invalid (no parameters, no body): nothing to send
                assert mode is GenerationMode.NEGATIVE, op.label

    total = sum(calls.values())
    print(f"schemathesis: {total} requests over {len(calls)} operations; statuses {sorted(statuses.items())}")
    assert total >= len(operations) * EXAMPLES
    assert not [s for s in statuses if s >= 500]


def test_events_stream_matches_its_schema(live: tuple[str, str | None]) -> None:
    """The live feed's events (read from a real server) validate against the published ``StoreEvent``."""
    import json

    import jsonschema

    url, token = live
    headers = auth(token) if token else {}
    with httpx.Client(base_url=url, headers=headers, timeout=30) as client:
        spec = client.get("/openapi.json").json()
        item = spec["paths"][EVENTS_PATH]["get"]["responses"]["200"]["content"]["text/event-stream"]["itemSchema"]
        data_schema = dict(spec["components"]["schemas"]["StoreEvent"])
        assert item["properties"]["data"]["contentSchema"] == {"$ref": "#/components/schemas/StoreEvent"}
        events: list[dict[str, Any]] = []
        with client.stream("GET", EVENTS_PATH) as resp:
            assert resp.status_code == 200
            lines = resp.iter_lines()
            for line in lines:
                if not line.startswith("data:"):
                    continue
                event = json.loads(line[5:])
                jsonschema.validate(event, data_schema)
                events.append(event)
                if event["type"] == "subscribed":
                    r = client.post("/api/agents/ops/generate", json={"messages": "delete 9", "threadId": "ev"})
                    assert r.status_code == 200, r.text
                if event["type"] == "suspended":
                    assert set(event) <= {"type", "runId", "toolCallId", "decision", "agentId"}
                    break
    assert events[0] == {"type": "subscribed"} and events[-1]["type"] == "suspended"
