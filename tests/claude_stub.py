"""A scripted stand-in for the Anthropic Messages API on loopback, for driving the real Claude Code CLI.

The CLI's conversation request (the one that offers the ``Bash`` tool) is answered in two turns: the
first with a streamed ``tool_use`` block that runs ``command`` in ``Bash``; the next, which carries the
``tool_result`` the CLI produced (the hook's verdict, or the command's output), is recorded and answered
with a short final text. Side requests the CLI makes on its own (titles, quota probes, token counts) get
a short text, so nothing here depends on their number or order. Every request body is kept, so a test
asserts on what the real client sent, not on what a mock was told.

The SSE shapes follow the Messages API's streaming contract: ``message_start``, then per content block
``content_block_start`` / ``content_block_delta`` (``text_delta`` or ``input_json_delta``) /
``content_block_stop``, then ``message_delta`` (the ``stop_reason``) and ``message_stop``.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.stub_http import LoopbackStub, QuietHandler

MODEL = "claude-stub-1"
TOOL_USE_ID = "toolu_01MergeHoldStubBash000001"
FINAL_TEXT = "Understood."


def _event(name: str, data: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()


def _usage() -> dict[str, int]:
    return {"input_tokens": 12, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def _message(message_id: str, content: list[dict[str, Any]], stop_reason: str | None) -> dict[str, Any]:
    return {"id": message_id, "type": "message", "role": "assistant", "model": MODEL, "content": content,
            "stop_reason": stop_reason, "stop_sequence": None, "usage": _usage()}


def sse_stream(message_id: str, block: dict[str, Any], stop_reason: str) -> bytes:
    """One assistant message with one content block (``text`` or ``tool_use``), as SSE events."""
    if block["type"] == "tool_use":
        start = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    else:
        start = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": block["text"]}
    return b"".join([
        _event("message_start", {"type": "message_start", "message": _message(message_id, [], None)}),
        _event("content_block_start", {"type": "content_block_start", "index": 0, "content_block": start}),
        _event("ping", {"type": "ping"}),
        _event("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        _event("content_block_stop", {"type": "content_block_stop", "index": 0}),
        _event("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                                 "usage": {"output_tokens": 8}}),
        _event("message_stop", {"type": "message_stop"}),
    ])


def _offers_bash(body: dict[str, Any]) -> bool:
    tools = body.get("tools")
    return isinstance(tools, list) and any(isinstance(t, dict) and t.get("name") == "Bash" for t in tools)


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of the request's last message (what the CLI reports back)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not isinstance(messages[-1], dict):
        return []
    content = messages[-1].get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]


def result_text(result: dict[str, Any]) -> str:
    """A ``tool_result``'s content as text (it is a string or a list of text blocks)."""
    content = result.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return ""


class MessagesStub(LoopbackStub):
    """``POST /v1/messages`` on 127.0.0.1: one ``Bash`` call of ``command``, then a final text.

    Use as a context manager; `base_url` goes into ``ANTHROPIC_BASE_URL``.
    """

    def __init__(self, command: str, *, description: str = "Run the command") -> None:
        self.description = description
        self.tool_results: list[dict[str, Any]] = []
        super().__init__(command)

    @property
    def tool_result(self) -> dict[str, Any] | None:
        """The ``tool_result`` the CLI sent for our ``Bash`` call, once it has."""
        return next((r for r in self.tool_results if r.get("tool_use_id") == TOOL_USE_ID), None)

    def answer(self, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
        """The content block and stop reason for one request (the script)."""
        with self._lock:
            self.requests.append(body)
            number = len(self.requests)
            results = _tool_results(body)
            self.tool_results.extend(results)
            if _offers_bash(body) and not results and not self._issued:
                self._issued = True
                block = {"type": "tool_use", "id": TOOL_USE_ID, "name": "Bash",
                         "input": {"command": self.command, "description": self.description}}
                return block, "tool_use"
        return {"type": "text", "text": FINAL_TEXT if results else f"Reply {number}."}, "end_turn"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(QuietHandler):
            extra_headers = {"request-id": "req_stub"}

            def do_GET(self) -> None:
                stub.paths.append(f"GET {self.path}")
                self._send(404, "application/json", b'{"type":"error","error":{"type":"not_found_error"}}')

            do_HEAD = do_GET

            def do_POST(self) -> None:
                stub.paths.append(f"POST {self.path}")
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path = self.path.split("?", 1)[0]
                if path.endswith("/count_tokens"):
                    self._send(200, "application/json", b'{"input_tokens": 12}')
                    return
                if not path.endswith("/v1/messages"):
                    self._send(404, "application/json", b'{"type":"error","error":{"type":"not_found_error"}}')
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    self._send(400, "application/json", b'{"type":"error","error":{"type":"invalid_request_error"}}')
                    return
                block, stop_reason = stub.answer(body if isinstance(body, dict) else {})
                message_id = f"msg_stub_{len(stub.requests):04d}"
                if body.get("stream"):
                    self._send(200, "text/event-stream", sse_stream(message_id, block, stop_reason))
                else:
                    payload = _message(message_id, [block], stop_reason)
                    self._send(200, "application/json", json.dumps(payload).encode())

        return Handler
