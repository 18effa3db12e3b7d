"""Warden's client SDK: call a Warden server with the same method names as ``agent_core.Agent``.

    async with WardenClient("http://127.0.0.1:4111", token="...") as client:
        ops = client.agent("ops")
        stream = await ops.stream("delete record 7", require_tool_approval=True)
        async for chunk in stream.full_stream:          # agent_core.chunks.Chunk
            ...
        await (await ops.approve_tool_call(run_id=stream.run_id)).consume()

HTTP errors come back as the runtime's own ``WardenError`` subclasses (by ``code``).
"""

from warden_client._async import RemoteAgent, RemoteAgentStream, WardenClient
from warden_client._sync import SyncAgentStream, SyncRemoteAgent, SyncWardenClient
from warden_client.errors import (
    Forbidden,
    InvalidRequest,
    ProtocolError,
    RequestTooLarge,
    RouteNotFound,
    ServerError,
    Unauthorized,
)

__all__ = [
    "Forbidden",
    "InvalidRequest",
    "ProtocolError",
    "RemoteAgent",
    "RemoteAgentStream",
    "RequestTooLarge",
    "RouteNotFound",
    "ServerError",
    "SyncAgentStream",
    "SyncRemoteAgent",
    "SyncWardenClient",
    "Unauthorized",
    "WardenClient",
]
