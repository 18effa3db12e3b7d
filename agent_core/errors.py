"""Typed errors of the runtime. Each has a stable ``code``; messages name the run and store."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from storage.errors import (
    CorruptRecord,
    SchemaTooNew,
    StorageError,
    StoreClosed,
    StoreCorrupt,
    StoreReadOnly,
    StoreUnavailable,
    UnstorableText,
    WardenError,
)

__all__ = [
    "ActorRequired",
    "AgentNotFound",
    "AlreadyDecided",
    "AlreadyVoted",
    "AmbiguousIdPrefix",
    "AmbiguousToolCall",
    "CorruptRecord",
    "CorruptSnapshot",
    "EditNotSupported",
    "FingerprintMismatch",
    "IllegalTransition",
    "InvalidRequest",
    "InvalidToolDefinition",
    "LeaseLost",
    "ModelError",
    "PolicyInvalid",
    "ProviderConfigError",
    "ResumeDataInvalid",
    "SchemaTooNew",
    "SelfApprovalNotAllowed",
    "SnapshotNotFound",
    "StorageError",
    "StoreClosed",
    "StoreCorrupt",
    "StoreReadOnly",
    "StoreUnavailable",
    "StructuredOutputInvalid",
    "SuspendPayloadInvalid",
    "ToolCallNotSuspended",
    "ToolOutputNotSerializable",
    "UnstorableText",
    "WardenError",
    "WrongDecisionKind",
]

if TYPE_CHECKING:
    from pydantic import ValidationError


def validation_problems(exc: ValidationError, *, limit: int | None = None) -> tuple[list[dict[str, Any]], str]:
    """A pydantic error as ``(errors, text)``: ``errors`` for ``.errors`` of a typed error (JSON-ready:
    ``loc``, ``msg``, ``type``), ``text`` for its message (``loc: msg; ...``, the first ``limit``)."""
    errors = [{"loc": list(e["loc"]), "msg": e["msg"], "type": e["type"]} for e in exc.errors()]
    shown = errors if limit is None else errors[:limit]
    text = "; ".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in shown)
    return errors, text


class SnapshotNotFound(WardenError):
    code = "AGENT_RESUME_NO_SNAPSHOT_FOUND"


class ToolCallNotSuspended(WardenError):
    code = "AGENT_RESUME_TOOL_CALL_NOT_SUSPENDED"


class AlreadyDecided(WardenError):
    code = "AGENT_TOOL_CALL_ALREADY_DECIDED"


class FingerprintMismatch(WardenError):
    code = "AGENT_APPROVAL_FINGERPRINT_MISMATCH"


class ResumeDataInvalid(WardenError):
    code = "AGENT_RESUME_DATA_INVALID"

    def __init__(self, message: str, *, errors: list[dict] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


class SuspendPayloadInvalid(WardenError):
    code = "TOOL_SUSPEND_PAYLOAD_INVALID"


class WrongDecisionKind(WardenError):
    """Approving a call that waits for resume data, or resuming one that waits for approval."""

    code = "AGENT_WRONG_DECISION_KIND"


class AmbiguousToolCall(WardenError):
    code = "AGENT_AMBIGUOUS_TOOL_CALL"


class AmbiguousIdPrefix(WardenError):
    """A shortened run or tool-call id (``warden runs show 3f9a2c``) names more than one; the
    message lists the candidates."""

    code = "AGENT_AMBIGUOUS_ID_PREFIX"


class CorruptSnapshot(WardenError):
    code = "AGENT_SNAPSHOT_CORRUPT"


class AgentNotFound(WardenError):
    code = "AGENT_NOT_FOUND"


class InvalidRequest(WardenError):
    """A call's arguments are unusable (e.g. a request_context that cannot be stored)."""

    code = "INVALID_REQUEST"


class InvalidToolDefinition(WardenError):
    code = "TOOL_DEFINITION_INVALID"


class ModelError(WardenError):
    """The model (or its provider) failed; the run ends with an ``error`` chunk."""

    code = "MODEL_ERROR"


class ProviderConfigError(WardenError):
    """A model string names an unknown provider, or a needed key/setting is missing."""

    code = "PROVIDER_CONFIG_ERROR"


class IllegalTransition(WardenError):
    """A tool call was asked to move to a state its current state does not lead to (a bug)."""

    code = "AGENT_ILLEGAL_CALL_TRANSITION"


class LeaseLost(WardenError):
    """This process no longer holds the run's lease (it stalled past ``lease_seconds`` and
    another process took the run over): its writes are refused and it runs no tool."""

    code = "AGENT_LEASE_LOST"


class ToolOutputNotSerializable(WardenError):
    """A tool wrote progress (``ctx.writer.write``) that is not JSON-serialisable."""

    code = "AGENT_TOOL_OUTPUT_NOT_SERIALIZABLE"


class StructuredOutputInvalid(WardenError):
    """The final answer of a run with ``output_schema`` is not JSON that validates; ``text`` is the raw answer."""

    code = "AGENT_STRUCTURED_OUTPUT_INVALID"

    def __init__(self, message: str, *, text: str = "", code: str | None = None) -> None:
        super().__init__(message, code=code)
        self.text = text


class EditNotSupported(WardenError):
    """``approve_tool_call(args=...)`` on a call of a framework that cannot run edited arguments
    (the OpenAI Agents SDK); raised before anything changes."""

    code = "AGENT_EDIT_NOT_SUPPORTED"


class ToolArgsInvalid(WardenError):
    """Edited arguments (``approve_tool_call(args=...)``) fail the tool's ``input_schema``; nothing changed."""

    code = "AGENT_TOOL_ARGS_INVALID"

    def __init__(self, message: str, *, errors: list[dict] | None = None) -> None:
        super().__init__(message)
        self.errors = errors or []


class ApprovalExpired(WardenError):
    """The call's approval deadline (``approval_timeout``) passed: it can no longer be decided."""

    code = "AGENT_APPROVAL_EXPIRED"


class GrantNotAllowed(WardenError):
    """The tool was created with ``allow_grants=False``: it cannot be granted."""

    code = "AGENT_GRANT_NOT_ALLOWED"


class GrantNotFound(WardenError):
    """No grant with that id (revoked, expired and swept, or never created)."""

    code = "AGENT_GRANT_NOT_FOUND"


class PolicyInvalid(WardenError):
    """A policy file or rule that cannot be used: bad TOML, an unknown decision, a rule that does not compile."""

    code = "AGENT_POLICY_INVALID"


class ActorRequired(WardenError):
    """A vote toward a quorum (``approvers`` >= 2) needs a named actor."""

    code = "AGENT_ACTOR_REQUIRED"


class AlreadyVoted(WardenError):
    """This actor already approved this fingerprint of the call: a quorum counts distinct people."""

    code = "AGENT_ALREADY_VOTED"


class SelfApprovalNotAllowed(WardenError):
    """The actor who started the run never counts toward a quorum of two or more."""

    code = "AGENT_SELF_APPROVAL"
