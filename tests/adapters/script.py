"""The scripted conversation the three test apps' models follow (each speaks its own framework's types).

A prompt is turns separated by ``then``; each turn is pairs ``delete ID`` (``delete_record``) and
``lookup Q`` (``lookup``): ``"lookup x then delete y"`` calls ``lookup`` first and, once its result is
in, ``delete_record``; after the last turn the model answers with every result it saw.
"""

from __future__ import annotations

from typing import Any

_TOOLS = {"delete": ("delete_record", "record_id"), "lookup": ("lookup", "query")}


def turns(prompt: str, done: int) -> list[tuple[str, dict[str, Any]]] | None:
    """The tool calls of turn ``done`` (0-based), or None when every turn is done (time to answer)."""
    segments = [s.split() for s in prompt.split(" then ")]
    if done >= len(segments):
        return None
    words = segments[done]
    calls = [(_TOOLS[v][0], {_TOOLS[v][1]: a}) for v, a in zip(words[::2], words[1::2], strict=False) if v in _TOOLS]
    return calls or (None if done else [])
