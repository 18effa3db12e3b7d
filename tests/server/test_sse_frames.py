"""The SSE framing: one pass of pydantic's encoder gives the JSON ``wire.encode_chunk`` gives,
ASCII only; the response ends with ``[DONE]`` in its last frame, pings while idle, and stops (the
run does not) when its client goes away."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from agent_core import wire
from agent_core.chunks import Chunk, make_chunk
from warden_server import sse
from warden_server.sse import SseResponse, StreamPump, encode_event

TRICKY: list[Any] = [
    "plain",
    "é and 😀 and \u2028\u2029 line separators",
    "\x00\x01\x1b[31m red \x7f\x9b",
    1.5e-7,
    1e16,
    2**80,
    float("nan"),
    {"nested": [1, None, True, {"deep": "ü"}]},
]


def _chunks() -> list[Chunk]:
    out = [
        make_chunk("start", "r/1", agent_id="ops"),
        make_chunk("text-delta", "r/1", text="hé\x7f\u2028"),
        make_chunk("tool-call", "r/1", tool_call_id="c1", tool_name="t", args={"id": "x\x00"}),
        make_chunk("step-finish", "r/1", step=0, finish_reason="tool-calls"),
    ]
    for i, value in enumerate(TRICKY):
        out.append(
            make_chunk(
                "tool-result", "r/1", tool_call_id=f"c{i}", tool_name="t", result={"v": value}, is_error=False, args={}
            )
        )
    return out


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values (NaN is written as null by both)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


@pytest.mark.parametrize("chunk", _chunks(), ids=lambda c: c.type)
def test_one_pass_event_is_the_wire_json(chunk: Chunk) -> None:
    frame = encode_event(chunk)
    assert frame.startswith(b"data: ") and frame.endswith(b"\n\n")
    body = frame[len(b"data: ") : -2]
    assert body.isascii() and b"\n" not in body and b"\r" not in body
    assert not any(b < 0x20 or b == 0x7F for b in body), body  # control characters escaped, DEL too
    assert _same(json.loads(body), wire.encode_chunk(chunk))
    # the bytes ``json`` wrote before, but for the spelling of exponents (1.5e-7 vs 1.5e-07)
    before = ("data: " + sse.dumps(wire.encode_chunk(chunk)) + "\n\n").encode("ascii")
    assert frame == before or "e-0" in before.decode()


def test_a_dict_event_is_json() -> None:
    error = wire.encode_error_chunk("r", "boom \x7f", "INTERNAL_ERROR")
    assert json.loads(encode_event(error)[6:-2]) == error


class _Stream:
    """An ``AgentStream``-like source whose chunks the test releases one by one."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.gate: asyncio.Queue[Chunk | None] = asyncio.Queue()

    @property
    def full_stream(self) -> Any:
        async def gen() -> Any:
            while (chunk := await self.gate.get()) is not None:
                yield chunk

        return gen()


async def _serve(
    response: SseResponse, disconnect: asyncio.Event, sent: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    sent = [] if sent is None else sent
    received = False

    async def receive() -> dict[str, Any]:
        nonlocal received
        if not received:
            received = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await disconnect.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await response({"type": "http", "method": "POST", "path": "/"}, receive, send)
    return sent


async def test_the_last_frame_closes_the_body() -> None:
    stream = _Stream("r1")
    pump = StreamPump(stream, set())
    for chunk in _chunks()[:2]:
        stream.gate.put_nowait(chunk)
    stream.gate.put_nowait(None)
    sent = await _serve(SseResponse(pump), asyncio.Event())
    assert sent[0]["type"] == "http.response.start" and sent[0]["status"] == 200
    headers = dict(sent[0]["headers"])
    assert (
        headers[b"content-type"].startswith(b"text/event-stream")
        and headers[wire.RUN_ID_HEADER.lower().encode()] == b"r1"
    )
    bodies = sent[1:]
    assert all(m["more_body"] for m in bodies[:-1]) and bodies[-1]["more_body"] is False
    text = b"".join(m["body"] for m in bodies).decode("ascii")
    events = [e for e in text.split("\n\n") if e]
    assert events[-1] == f"data: {wire.SSE_DONE}"
    assert [json.loads(e[6:])["type"] for e in events[:-1]] == ["start", "text-delta"]


async def test_idle_stream_pings_then_a_hang_up_ends_the_response_not_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sse, "PING_SECONDS", 0.01)
    monkeypatch.setattr(sse, "WATCH_AFTER_SECONDS", 0.005)
    stream = _Stream("r2")
    pumps: set[StreamPump] = set()
    pump = StreamPump(stream, pumps)
    disconnect = asyncio.Event()
    sent_so_far: list[dict[str, Any]] = []
    served = asyncio.ensure_future(_serve(SseResponse(pump), disconnect, sent_so_far))
    stream.gate.put_nowait(_chunks()[0])
    while sum(m.get("body") == b": ping\n\n" for m in sent_so_far) < 2:  # idle: pinged, more than once
        await asyncio.sleep(0.01)
    disconnect.set()  # the client goes away
    sent = await served
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
    assert all(wire.SSE_DONE.encode() not in m.get("body", b"") for m in sent)
    assert not pump.task.done() and pump in pumps  # the run goes on without its reader
    stream.gate.put_nowait(_chunks()[1])
    stream.gate.put_nowait(None)
    await pump.wait()
    assert pump not in pumps
    assert [c["type"] for c in pump.chunks()] == ["text-delta"]  # what nobody read is still there


async def test_an_answer_complete_at_once_starts_no_watcher_on_receive() -> None:
    """An approval's answer is usually all there within milliseconds: no task waits on ``receive``
    for the disconnect (a task and its cancellation per approve); a longer one gets one."""
    stream = _Stream("r5")
    pump = StreamPump(stream, set())
    for chunk in _chunks()[:2]:
        stream.gate.put_nowait(chunk)
    stream.gate.put_nowait(None)
    calls = 0

    async def receive() -> dict[str, Any]:
        nonlocal calls
        calls += 1
        await asyncio.Event().wait()
        return {"type": "http.disconnect"}

    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await SseResponse(pump)({"type": "http", "method": "POST", "path": "/"}, receive, send)
    assert sent[-1]["more_body"] is False and calls == 0


class _Unencodable:
    """A chunk-like object the JSON encoder refuses."""

    type = "tool-result"

    def model_dump_json(self, **kw: Any) -> str:
        raise ValueError("not JSON")

    def to_json(self) -> dict[str, Any]:
        raise ValueError("not JSON")


async def test_a_chunk_the_encoder_refuses_becomes_an_in_band_error_and_ends_the_answer() -> None:
    stream = _Stream("r3")
    pump = StreamPump(stream, set())
    for item in (_chunks()[0], _Unencodable(), _chunks()[1]):
        stream.gate.put_nowait(item)  # type: ignore[arg-type]
    stream.gate.put_nowait(None)
    await pump.wait()
    sent = await _serve(SseResponse(pump), asyncio.Event())
    assert sent[-1]["more_body"] is False
    events = [e for e in b"".join(m["body"] for m in sent[1:]).decode("ascii").split("\n\n") if e]
    assert events[-1] == f"data: {wire.SSE_DONE}"
    error = json.loads(events[-2][6:])
    assert error["type"] == "error" and error["payload"]["code"] == wire.INTERNAL_ERROR
    assert "not JSON" not in events[-2]  # no internals
    assert [json.loads(e[6:])["type"] for e in events[:-1]] == ["start", "error"]  # nothing after the error

    again = _Stream("r4")
    whole = StreamPump(again, set())
    for item in (_chunks()[0], _Unencodable(), _chunks()[1]):
        again.gate.put_nowait(item)  # type: ignore[arg-type]
    again.gate.put_nowait(None)
    await whole.wait()
    assert [c["type"] for c in whole.chunks()] == ["start", "error"]  # the answer sent whole: the same


def _one_of_each() -> list[Chunk]:
    """A chunk of every payload type, with the optional fields both left out and given."""
    from datetime import UTC, datetime

    call = {"tool_call_id": "c\u2028", "tool_name": "t\x7f", "args": {"v": TRICKY}}
    at = datetime(2026, 1, 2, 3, 4, 5, 678901, tzinfo=UTC)
    return [
        make_chunk("start", "r/é", agent_id="ops"),
        make_chunk("step-start", "r", step=3),
        make_chunk("text-delta", "r", text="hé\x7f\u2028😀"),
        make_chunk("tool-call", "r", **call),
        make_chunk("tool-call-approval", "r", fingerprint="sha256:x", **call),
        make_chunk(
            "tool-call-approval",
            "r",
            fingerprint="f",
            resume_schema={"type": "object"},
            agent_path=["a", "b"],
            expires_at=at,
            policy_rule="rule",
            policy_reason="why",
            approvers_required=2,
            approvals=[{"actor": "ann", "at": 1.5}],
            **call,
        ),
        make_chunk("tool-call-suspended", "r", suspend_payload={"q": [1, 2.5]}, **call),
        make_chunk("tool-result", "r", result={"v": TRICKY}, is_error=False, **call),
        make_chunk("tool-result", "r", tool_call_id="c", tool_name="t", result=None, grant_id="g1"),
        make_chunk("tool-error", "r", tool_call_id="c", tool_name="t", error="boom\x00"),
        make_chunk("tool-output-denied", "r", reason="no", policy_rule="deny-all", **call),
        make_chunk("tool-call-expired", "r", expired_at=at, **call),
        make_chunk("tool-output", "r", tool_call_id="c", tool_name="t", data={"progress": 0.5}, agent_path=["a"]),
        make_chunk("step-finish", "r", step=0, finish_reason="tool-calls"),
        make_chunk("finish", "r", finish_reason="stop"),
        make_chunk("finish", "r", finish_reason="stop", object={"answer": 42}),
        make_chunk("error", "r", error="bad", code="INTERNAL_ERROR"),
    ]


@pytest.mark.parametrize("chunk", _one_of_each(), ids=lambda c: c.type)
def test_an_event_is_the_bytes_of_the_chunks_own_serializer(chunk: Chunk) -> None:
    """The envelope written by hand around the payload's own serializer: byte for byte what the
    ``Chunk`` model writes (its serializer goes through the payload union)."""
    whole = chunk.model_dump_json(by_alias=True, ensure_ascii=True).replace("\x7f", "\\u007f")
    assert sse._chunk_json(chunk) is not None  # the fast path covers every payload type
    assert encode_event(chunk) == b"data: " + whole.encode("ascii") + b"\n\n"


def test_a_chunk_the_fast_path_does_not_cover_goes_through_the_model() -> None:
    odd = make_chunk("text-delta", "r", text="x")
    object.__setattr__(odd, "__dict__", {**odd.__dict__, "run_id": 7})  # not text: the model decides
    assert sse._chunk_json(odd) is None
    with pytest.warns(UserWarning):  # pydantic says it wrote a number where text was declared
        assert json.loads(encode_event(odd)[6:-2])["payload"] == {"text": "x"}


async def test_the_answers_headers_are_starlettes() -> None:
    """The constant headers are built once: the same list ``Response.init_headers`` made per answer."""
    from starlette.responses import Response

    stream = _Stream("run/é")
    pump = StreamPump(stream, set())
    stream.gate.put_nowait(None)
    await pump.wait()
    expected = Response(media_type=wire.SSE_MEDIA_TYPE)
    del expected.body  # as SseResponse: no body, so no content-length
    expected.init_headers({wire.RUN_ID_HEADER: "run/é", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    assert SseResponse(pump).raw_headers == expected.raw_headers


async def test_one_clock_ticks_for_every_open_answer_and_stops_with_the_last(monkeypatch: pytest.MonkeyPatch) -> None:
    """The watchers' delay and the pings are timed by one timer per loop while answers are open (not a
    timer per answer and per wait), and no timer is left once none is."""
    monkeypatch.setattr(sse, "TICK_SECONDS", 0.01)
    monkeypatch.setattr(sse, "PING_SECONDS", 0.03)
    loop = asyncio.get_running_loop()
    made: list[Any] = []
    real_call_later = loop.call_later

    def counting(delay: float, callback: Any, *args: Any) -> asyncio.TimerHandle:
        if getattr(callback, "__self__", None) is not None or getattr(callback, "__func__", None) is not None:
            made.append(delay)  # a bound method's timer (the clock's, a pump's or an answer's), not a sleep
        return real_call_later(delay, callback, *args)

    monkeypatch.setattr(loop, "call_later", counting)
    streams = [_Stream(f"c{i}") for i in range(3)]
    sent: list[list[dict[str, Any]]] = [[], [], []]
    served = [
        asyncio.ensure_future(_serve(SseResponse(StreamPump(s, set())), asyncio.Event(), out))
        for s, out in zip(streams, sent, strict=True)
    ]
    await asyncio.sleep(0.004)
    clock = sse._clock(loop)
    assert len(clock._open) == 3 and made == [0.01]  # one timer for the three
    while not all(any(m.get("body") == b": ping\n\n" for m in out) for out in sent):
        await asyncio.sleep(0.005)  # each idle answer is pinged
    for s in streams:
        s.gate.put_nowait(None)
    await asyncio.gather(*served)
    assert not clock._open
    await asyncio.sleep(0.03)
    assert clock._timer is None  # idle: no timer left
    assert all(delay == 0.01 for delay in made)


async def test_a_ping_is_not_sent_before_its_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sse, "TICK_SECONDS", 0.01)
    monkeypatch.setattr(sse, "PING_SECONDS", 0.2)
    stream = _Stream("p1")
    out: list[dict[str, Any]] = []
    served = asyncio.ensure_future(_serve(SseResponse(StreamPump(stream, set())), asyncio.Event(), out))
    await asyncio.sleep(0.1)
    assert not any(m.get("body") == b": ping\n\n" for m in out)
    stream.gate.put_nowait(None)
    await served
