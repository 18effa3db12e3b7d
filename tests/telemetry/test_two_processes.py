"""One run, two ``warden serve`` processes on one store: the gating process's spans and the deciding
process's spans reach a real OTLP/HTTP receiver on loopback and share one trace id.

Both servers configure the SDK themselves from ``OTEL_EXPORTER_OTLP_ENDPOINT`` (nothing in the app
module sets a provider); the receiver decodes the protobuf bodies with ``opentelemetry-proto``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.server.helpers import first, raw, sse_post
from tests.server.procs import ServerFactory


class Receiver:
    """A minimal OTLP/HTTP collector: keeps every span (with its service name) and metric name."""

    def __init__(self) -> None:
        self.spans: list[tuple[str, object]] = []
        self.metrics: set[str] = set()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                if self.path == "/v1/traces":
                    req = ExportTraceServiceRequest.FromString(body)
                    for rs in req.resource_spans:
                        service = next(a.value.string_value for a in rs.resource.attributes if a.key == "service.name")
                        receiver.spans.extend((service, s) for ss in rs.scope_spans for s in ss.spans)
                    reply = ExportTraceServiceResponse().SerializeToString()
                else:
                    mreq = ExportMetricsServiceRequest.FromString(body)
                    for rm in mreq.resource_metrics:
                        receiver.metrics.update(m.name for sm in rm.scope_metrics for m in sm.metrics)
                    reply = ExportMetricsServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"
        threading.Thread(target=self.http.serve_forever, daemon=True).start()

    def named(self, name: str) -> list:
        return [s for _, s in self.spans if s.name == name]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.http.shutdown()
    r.http.server_close()


def test_a_decision_in_another_server_continues_the_runs_trace(
    receiver: Receiver, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
    monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", "100000")  # metrics are exported at shutdown
    servers = ServerFactory(tmp_path)
    try:
        monkeypatch.setenv("OTEL_SERVICE_NAME", "gating")
        gating = servers.start("gating")
        monkeypatch.setenv("OTEL_SERVICE_NAME", "deciding")
        deciding = servers.start("deciding")
        with raw(gating.url) as client:
            r, chunks = sse_post(
                client, "/api/agents/ops/stream", {"messages": [{"role": "user", "content": "delete abc"}]}
            )
        assert r.status_code == 200, r.text
        approval = first(chunks, "tool-call-approval")
        run_id = approval["runId"]
        call_id = approval["payload"]["toolCallId"]
        gating.stop()  # the gating process is gone (it flushed its spans as it shut down)
        with raw(deciding.url) as client:
            r, after = sse_post(client, "/api/agents/ops/approve-tool-call", {"runId": run_id, "toolCallId": call_id})
        assert r.status_code == 200, r.text
        assert first(after, "tool-result")["payload"]["toolCallId"] == call_id
    finally:
        servers.stop_all()
    assert len(servers.executions("delete-record")) == 1

    by_service: dict[str, set[str]] = {}
    for service, span in receiver.spans:
        by_service.setdefault(service, set()).add(span.name)
    assert by_service["gating"] >= {"invoke_agent ops", "chat function"}
    assert by_service["deciding"] >= {"invoke_agent ops", "await_approval delete_tool", "execute_tool delete_tool"}
    assert len({span.trace_id for _, span in receiver.spans}) == 1  # one run, one trace

    first_invoke = next(s for svc, s in receiver.spans if svc == "gating" and s.name == "invoke_agent ops")
    wait = receiver.named("await_approval delete_tool")[0]
    resumed = next(s for svc, s in receiver.spans if svc == "deciding" and s.name == "invoke_agent ops")
    # the deciding process's spans hang under the run's first invoke_agent, exported by the gating process
    assert wait.parent_span_id == first_invoke.span_id and resumed.parent_span_id == first_invoke.span_id
    attrs = {a.key: a.value for a in wait.attributes}
    assert attrs["warden.approval.decision"].string_value == "approved"
    assert attrs["gen_ai.tool.call.id"].string_value == call_id
    assert attrs["warden.run.id"].string_value == run_id
    assert wait.start_time_unix_nano < first_invoke.end_time_unix_nano  # it began when the call was gated
    assert {"warden.approvals.pending", "warden.decisions", "warden.approval.wait"} <= receiver.metrics
