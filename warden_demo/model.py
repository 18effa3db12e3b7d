"""A deterministic, offline demo model: understands a few phrasings, streams word by word."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator
from typing import Any

from agent_core.models import (
    LanguageModel,
    Message,
    ModelDone,
    ModelEvent,
    ModelRequestInfo,
    ModelResponse,
    TextDelta,
    ToolCall,
)

HELP_TEXT = (
    'I am the offline demo model. Try: "delete record abc-123", "refund order ord-1042 for 250", '
    '"send an email to ana@example.com saying hello", "what\'s the weather" (or "... in Paris"), '
    'or, with the supervisor agent, "find user 12345".'
)

_DELETE = re.compile(r"\bdelete\s+(?:the\s+)?record\s+([\w.-]+)", re.I)
_REFUND = re.compile(r"\brefund\s+(?:order\s+)?([\w.-]+)\s+(?:for\s+)?\$?(\d+(?:\.\d+)?)", re.I)
_EMAIL = re.compile(
    r"\bsend\s+(?:an?\s+)?e-?mail\s+to\s+(\S+@[^\s,:]+)[\s,:]*(?:(?:saying|about|that)\s+)?(.*)$", re.I | re.S
)
_WEATHER = re.compile(r"\bweather\b(?:.*?\bin\s+([A-Za-z][A-Za-z .'-]*?))?\s*[?.!]*$", re.I | re.S)
_FIND_USER = re.compile(r"\b(?:find|look\s*up|lookup)\s+user\s+([\w.-]+)", re.I)


def _default_delay() -> float:
    try:
        return float(os.environ.get("WARDEN_DEMO_DELAY", "0.02"))
    except ValueError:
        return 0.02


class DemoModel(LanguageModel):
    """``is_demo = True``: the console labels it. ``delay`` is the pause between streamed words."""

    model_id = "demo"
    is_demo = True

    def __init__(self, *, delay: float | None = None) -> None:
        self.delay = _default_delay() if delay is None else delay

    # -- the decision --------------------------------------------------------------------------
    def respond(self, messages: list[Message], info: ModelRequestInfo) -> ModelResponse:
        tools = {t.name for t in info.tools}
        if info.purpose == "resume":
            return self._resume_answer(messages)
        last = messages[-1] if messages else Message(role="user", content="")
        if last.role == "tool":
            return ModelResponse(text=self._after_tools(messages))
        prompt = last.content if last.role == "user" else ""
        step = sum(1 for m in messages if m.role == "assistant")
        # In a thread, ids carry the run's id (its first 8 characters): the thread's runs would
        # otherwise repeat ``call_0_0`` (Mastra Studio merges a chat's tool calls by id).
        run = (info.run_id or "")[:8] if info.thread_id else ""

        def call(name: str, args: dict[str, Any], text: str) -> ModelResponse:
            cid = f"call_{run}_{step}_0" if run else f"call_{step}_0"
            return ModelResponse(text=text, tool_calls=[ToolCall(name=name, args=args, id=cid)])

        if (m := _DELETE.search(prompt)) and "delete_record" in tools:
            return call("delete_record", {"record_id": m.group(1)}, f"I will delete record {m.group(1)}.")
        if (m := _REFUND.search(prompt)) and "issue_refund" in tools:
            amount = float(m.group(2))
            amount_json: int | float = int(amount) if amount.is_integer() else amount
            return call(
                "issue_refund",
                {"order_id": m.group(1), "amount": amount_json},
                f"I will refund {amount_json} on order {m.group(1)}.",
            )
        if (m := _EMAIL.search(prompt)) and "send_email" in tools:
            body = m.group(2).strip() or "Hello from Warden."
            subject = body.split(".")[0][:40] or "Hello"
            return call(
                "send_email",
                {"to": m.group(1), "subject": subject, "body": body},
                f"I will send an email to {m.group(1)}.",
            )
        if (m := _WEATHER.search(prompt)) and "get_weather" in tools:
            city = (m.group(1) or "").strip()
            return call(
                "get_weather",
                {"city": city} if city else {},
                f"Let me check the weather in {city}." if city else "Let me check the weather.",
            )
        if m := _FIND_USER.search(prompt):
            if "find_user" in tools:
                return call("find_user", {"user_id": m.group(1)}, f"Looking up user {m.group(1)}.")
            delegate = sorted(t for t in tools if t.startswith("agent-"))
            if delegate:
                return call(
                    delegate[0],
                    {"prompt": f"find user {m.group(1)}"},
                    f"I will ask {delegate[0].removeprefix('agent-')} to find user {m.group(1)}.",
                )
        return ModelResponse(text=HELP_TEXT)

    def _after_tools(self, messages: list[Message]) -> str:
        results: list[Message] = []
        for message in reversed(messages):
            if message.role != "tool":
                break
            results.append(message)
        parts = []
        for message in reversed(results):
            name = message.name or "the tool"
            value = _loads(message.content)
            if message.tool_status == "denied":
                parts.append(f"I did not run {name}: the operator declined. Reason: {value}")
            else:
                parts.append(f"Done: {name} returned {_plain(value)}")
        return " ".join(parts) or "Done."

    def _resume_answer(self, messages: list[Message]) -> ModelResponse:
        text = next((m.content for m in reversed(messages) if m.role == "user"), "")
        m = re.search(r"\b(?:in|for)\s+([A-Za-z][\w'-]*(?:\s+[A-Z][\w'-]*)*)", text) or re.search(
            r"([A-Z][a-z]+)", text
        )
        if not m:
            return ModelResponse(text="{}")
        units = "imperial" if re.search(r"fahrenheit|imperial", text, re.I) else "metric"
        return ModelResponse(text=json.dumps({"city": m.group(1).strip(" .?!"), "units": units}))

    # -- the LanguageModel interface -----------------------------------------------------------
    async def stream(self, messages: list[Message], info: ModelRequestInfo) -> AsyncIterator[ModelEvent]:
        response = self.respond(messages, info)
        if response.text and info.purpose != "resume":
            words = re.findall(r"\S+\s*", response.text)
            for word in words:
                if self.delay:
                    await asyncio.sleep(self.delay)
                yield TextDelta(text=word)
        elif response.text:
            yield TextDelta(text=response.text)
        yield ModelDone(response=response)


def _loads(content: str) -> object:
    try:
        return json.loads(content)
    except (ValueError, TypeError):
        return content


def _plain(value: object) -> str:
    """A tool result as a short sentence fragment."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return json.dumps(value, ensure_ascii=False)
