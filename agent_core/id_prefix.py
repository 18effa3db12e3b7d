"""Shortened ids: the console shows 8 characters of a run id, so ``warden runs show 3f9a2c1d``
must find the run. One rule for every surface (runtime, server, CLI):

- an id that exists as given is used as is (whatever its length);
- otherwise a prefix of at least ``MIN_PREFIX`` characters names the one id starting with it;
- an ambiguous prefix is ``AmbiguousIdPrefix`` listing the candidates; a shorter one that
  starts some ids is ``InvalidRequest`` (too short); none found is ``SnapshotNotFound`` /
  ``ToolCallNotSuspended`` (the CLI then passes the id on, for the command's usual error).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_core.errors import AmbiguousIdPrefix, InvalidRequest, SnapshotNotFound, ToolCallNotSuspended

if TYPE_CHECKING:
    from storage.base import Store

#: the shortest prefix accepted (6 hex characters of a uuid: 16 million values)
MIN_PREFIX = 6
#: candidates named in an ambiguity error
SHOWN = 5


async def resolve_id(store: Store, prefix: str, *, run_id: str | None = None) -> str:
    """The full run id (``run_id`` None) or tool-call id of ``run_id`` that ``prefix`` names."""
    what = "run id" if run_id is None else "tool call id"
    found = await store.find_ids(prefix, run_id=run_id, limit=SHOWN + 1)
    if prefix in found:
        return prefix
    if found and len(prefix) < MIN_PREFIX:
        # not an id, but the start of some: too short to pick one by (an unknown short id is "not found")
        raise InvalidRequest(
            f"{what} {prefix!r} is not an id and too short for a prefix: give at least {MIN_PREFIX} characters"
        )
    if len(found) == 1:
        return found[0]
    if not found:
        if run_id is None:
            raise SnapshotNotFound(f"no run with id {prefix!r} or starting with it in {store.name}")
        raise ToolCallNotSuspended(f"no tool call {prefix!r} (or starting with it) in run {run_id!r}")
    shown = ", ".join(found[:SHOWN]) + (", ..." if len(found) > SHOWN else "")
    where = "" if run_id is None else f" in run {run_id!r}"
    raise AmbiguousIdPrefix(f"{what} prefix {prefix!r} matches several{where}: {shown}")


__all__ = ["MIN_PREFIX", "resolve_id"]
