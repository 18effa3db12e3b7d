"""Run ids and lease tokens: the text forms ``uuid.uuid4`` gives, from fresh random bytes."""

from __future__ import annotations

import uuid

from agent_core.ids import new_run_id, new_token


def test_run_ids_are_canonical_version_4_uuids():
    ids = {new_run_id() for _ in range(1000)}
    assert len(ids) == 1000
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text and parsed.version == 4 and parsed.variant == uuid.RFC_4122


def test_tokens_are_32_hex_characters_and_distinct():
    tokens = {new_token() for _ in range(1000)}
    assert len(tokens) == 1000
    assert all(len(t) == 32 and int(t, 16) >= 0 for t in tokens)
