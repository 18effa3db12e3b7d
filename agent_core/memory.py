"""Conversation memory: a thread's messages, kept in the runtime's store."""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.models import Message


@dataclass
class Memory:
    """Give an agent memory: runs with a ``thread_id`` load the thread's history and append to it.

    ``last_messages`` bounds how much history is sent to the model (None = all).
    """

    last_messages: int | None = None

    @staticmethod
    def clean_history(messages: list[Message]) -> list[Message]:
        """Drop assistant tool calls whose results never arrived (a run still suspended, or lost).

        Providers reject a conversation with an unanswered tool call, and a new
        user turn must not inherit one.
        """
        answered = {m.tool_call_id for m in messages if m.role == "tool"}
        out: list[Message] = []
        for m in messages:
            if m.role == "assistant" and m.tool_calls and any(tc.id not in answered for tc in m.tool_calls):
                kept = [tc for tc in m.tool_calls if tc.id in answered]
                if not kept and not m.content:
                    continue
                m = m.model_copy(update={"tool_calls": kept})
            out.append(m)
        return out
