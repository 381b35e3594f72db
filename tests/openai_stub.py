"""A scripted stand-in for an OpenAI-compatible Chat Completions API on loopback, for driving real agent
CLIs that speak it (Qwen Code with ``OPENAI_BASE_URL``) offline.

The conversation request that offers the shell tool (``tool_name``) is answered with one streamed tool
call that runs ``command``; the next request carries the ``role: "tool"`` message the CLI produced (the
hook's verdict, or the command's output), which is recorded and answered with a short final text. Other
requests get a short text. Every request body is kept.

Shapes: ``POST /chat/completions`` with ``stream: true`` answers SSE ``data: <chat.completion.chunk>``
lines ending in ``data: [DONE]``; without ``stream``, one ``chat.completion`` object.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.stub_http import LoopbackStub, QuietHandler

CALL_ID = "call_mergehold_0001"
FINAL_TEXT = "Understood."


def _offers(body: dict[str, Any], name: str) -> bool:
    for tool in body.get("tools") or []:
        if isinstance(tool, dict) and (tool.get("function") or {}).get("name") == name:
            return True
    return False


def _tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "tool"]


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


class ChatStub(LoopbackStub):
    url_suffix = "/v1"

    def __init__(self, command: str, *, tool_name: str) -> None:
        self.tool_name = tool_name
        super().__init__(command)

    @property
    def tool_result(self) -> dict[str, Any] | None:
        """The ``role: "tool"`` message the CLI sent for our call, once it has."""
        for body in self.requests:
            for message in _tool_messages(body):
                if message.get("tool_call_id") == CALL_ID:
                    return message
        return None

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The assistant message delta for one request (the script)."""
        with self._lock:
            self.requests.append(body)
            answered = bool(_tool_messages(body))
            if _offers(body, self.tool_name) and not answered and not self._issued:
                self._issued = True
                call = {"index": 0, "id": CALL_ID, "type": "function",
                        "function": {"name": self.tool_name, "arguments": json.dumps({"command": self.command})}}
                return {"role": "assistant", "content": None, "tool_calls": [call]}
            number = len(self.requests)
        return {"role": "assistant", "content": FINAL_TEXT if answered else f"Reply {number}."}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                stub.paths.append(f"GET {self.path}")
                self._send(404, "application/json", b'{"error":{"message":"not found"}}')

            def do_POST(self) -> None:
                stub.paths.append(f"POST {self.path}")
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.split("?", 1)[0].endswith("/chat/completions"):
                    self._send(404, "application/json", b'{"error":{"message":"not found"}}')
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                body = body if isinstance(body, dict) else {}
                delta = stub.answer(body)
                finish = "tool_calls" if delta.get("tool_calls") else "stop"
                base = {"id": f"chatcmpl-{len(stub.requests)}", "created": 1764583200,
                        "model": str(body.get("model", "stub"))}
                usage = {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}
                if body.get("stream"):
                    chunks = [
                        {**base, "object": "chat.completion.chunk",
                         "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                        {**base, "object": "chat.completion.chunk",
                         "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
                    ]
                    data = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
                    self._send(200, "text/event-stream", data.encode())
                else:
                    message = {k: v for k, v in delta.items() if k != "tool_calls"}
                    if delta.get("tool_calls"):
                        message["tool_calls"] = [{k: v for k, v in c.items() if k != "index"}
                                                 for c in delta["tool_calls"]]
                    completion = {**base, "object": "chat.completion", "usage": usage,
                                  "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
                    self._send(200, "application/json", json.dumps(completion).encode())

        return Handler
