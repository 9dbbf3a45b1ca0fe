"""An OTLP/HTTP trace receiver for tests/traces.rs.

Listens on a free loopback port and prints `listening PORT` once it accepts requests. Each
POST to /v1/traces is decoded with the official OTLP protobuf definitions
(opentelemetry-proto) and answered 200. When its stdin closes, it prints every span received
as one JSON array on stdout and exits.
"""

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

spans = []
lock = threading.Lock()


def value(any_value):
    kind = any_value.WhichOneof("value")
    if kind == "string_value":
        return any_value.string_value
    if kind == "bool_value":
        return any_value.bool_value
    if kind == "int_value":
        return any_value.int_value
    if kind == "double_value":
        return any_value.double_value
    return None


def attributes(key_values):
    return {kv.key: value(kv.value) for kv in key_values}


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
            self.send_response(415)
            self.end_headers()
            return
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        received = []
        for resource_spans in request.resource_spans:
            resource = attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    received.append(
                        {
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_span_id": span.parent_span_id.hex(),
                            "name": span.name,
                            "kind": span.kind,
                            "start": span.start_time_unix_nano,
                            "end": span.end_time_unix_nano,
                            "attributes": attributes(span.attributes),
                            "status": {"code": span.status.code, "message": span.status.message},
                            "scope": scope_spans.scope.name,
                            "service": resource.get("service.name"),
                        }
                    )
        with lock:
            spans.extend(received)
        answer = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format, *args):
        pass


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    print(f"listening {server.server_address[1]}", flush=True)
    sys.stdin.read()
    server.shutdown()
    with lock:
        json.dump(spans, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
