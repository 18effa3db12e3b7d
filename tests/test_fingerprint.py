"""The fingerprint is RFC 8785 exactly, whatever path computes it."""

from __future__ import annotations

import hashlib
import random

import pytest
import rfc8785

from agent_core import fingerprint


def reference(tool: str, args) -> str:
    return "sha256:" + hashlib.sha256(rfc8785.dumps({"args": args, "tool": tool})).hexdigest()


def random_json(rng: random.Random, depth: int = 0):
    kinds = ["str", "int", "bool", "null", "float"] + (["dict", "list"] if depth < 3 else [])
    kind = rng.choice(kinds)
    if kind == "str":
        alphabet = [
            "a",
            "Z",
            "é",
            "\n",
            "\t",
            "\x00",
            "\x1f",
            "\x7f",
            '"',
            "\\",
            "\u2028",
            "\u202e",
            "😀",
            "\ue000",
            "/",
            "<",
            "\u200b",
        ]
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
    if kind == "int":
        return rng.choice([0, -1, 7, 2**31, -(2**53) + 1, 2**53 - 1, rng.randint(-(10**6), 10**6)])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "float":
        return rng.choice([0.5, 1e21, 1e-7, -0.0, 3.14159, 100.0, 1.7976931348623157e308])
    if kind == "dict":
        keys = ["a", "b", "B", "é", "😀", "\ue000", "z1", "10", "2", ""]
        return {rng.choice(keys): random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def test_matches_rfc8785_on_random_documents():
    rng = random.Random(8785)
    for _ in range(3000):
        args = {"x": random_json(rng)}
        assert fingerprint("tool", args) == reference("tool", args), args


@pytest.mark.parametrize(
    "args",
    [
        {"b": 1, "a": [1, {"y": "é", "x": None}]},
        {"\ue000": 1, "😀": 2},  # UTF-16 order differs from code point order
        {"n": 1.0, "m": 1e21},
        {"s": '\u2028\x00\x1f\\"'},
        {},
    ],
)
def test_known_shapes(args):
    assert fingerprint("t", args) == reference("t", args)


def test_format_and_sensitivity():
    fp = fingerprint("delete_record", {"id": "abc-123"})
    assert fp.startswith("sha256:") and len(fp) == 71
    assert fp != fingerprint("delete_record", {"id": "abc-124"})
    assert fp != fingerprint("delete_records", {"id": "abc-123"})


def test_audit_entry_hashes_are_rfc8785_exactly_on_random_entries():
    """The audit chain's hash (and the template PostgreSQL splices) is the RFC 8785 document,
    whichever path serializes each field: a chain written before the fast path still verifies."""
    from storage.audit import HASHED, entry_hash, hash_template
    from storage.records import AuditRow

    rng = random.Random(2026)
    texts = ["", "ana@example.com", "é\n", "\u202e😀", '\x00\x1f"\\', "\ue000\u2028"]
    for _ in range(2000):
        row = AuditRow(
            run_id=rng.choice(texts) + "r",
            tool_call_id=rng.choice(texts),
            agent_id="ops",
            tool_name=rng.choice(texts) + "t",
            decision=rng.choice(["approved", "declined", "expired"]),
            fingerprint="sha256:" + "ab" * 32,
            reason=rng.choice([None, *texts]),
            decided_at=rng.choice([1764547200.123456, 1e21, 0.5, 1764547200.0, 3.0e-7]),
            actor=rng.choice([None, *texts]),
            detail=rng.choice([None, {"grant_id": "g-1"}, {"edited_args": random_json(rng)}]),
            seq=rng.choice([1, 2**31, 2**53 - 1]),
            prev_hash=rng.choice([None, "sha256:" + "cd" * 32]),
        )
        doc = {name: getattr(row, name) for name in HASHED}
        assert entry_hash(row) == "sha256:" + hashlib.sha256(rfc8785.dumps(doc)).hexdigest(), row
        pre, mid, post = hash_template(row)
        assert pre + rfc8785.dumps(row.prev_hash) + mid + rfc8785.dumps(row.seq) + post == rfc8785.dumps(doc)


def test_canonical_floats_and_scalars_are_rfc8785_exactly():
    """The fast paths of ``storage.canonical`` (strings, null, floats without an exponent) against
    the reference serializer: random bit patterns and the magnitudes of timestamps and amounts."""
    import math
    import struct

    from storage.canonical import canonical

    rng = random.Random(1985)
    floats = [0.0, -0.0, 1.0, -1.0, 0.1, 1e-4, 9.999e-5, 1e16, 9999999999999998.0, 1e21, 5e-324, 2.0**53]
    floats += [rng.uniform(1.6e9, 2.0e9) for _ in range(3000)]
    floats += [rng.uniform(-1e6, 1e6) for _ in range(3000)]
    floats += [10.0 ** rng.uniform(-8, 22) for _ in range(3000)]
    floats += [struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(5000)]
    for f in floats:
        if math.isfinite(f):
            assert canonical(f) == rfc8785.dumps(f), repr(f)
    with pytest.raises(rfc8785.FloatDomainError):
        canonical(math.nan)
    for value in [None, "", "é\n\x00\x1f\u2028", '"\\', "😀\ue000", True, 7]:
        assert canonical(value) == rfc8785.dumps(value), value
