"""A scripted stand-in for the OpenAI Responses API on loopback, for driving the real Codex CLI offline
(a custom ``model_providers`` entry with ``wire_api = "responses"`` and this ``base_url``).

The first request that offers the shell tool (``tool_name``; Codex 0.171 offers ``exec_command`` with a
``cmd`` string) is answered with one ``function_call`` that runs ``command``; the next request carries the
``function_call_output`` the CLI produced for it (the hook's refusal, or the command's output), which is
recorded and answered with a short final text. Every request body is kept.

Shape: ``POST /v1/responses`` with ``stream: true`` answers SSE events ``response.created``,
``response.output_item.added`` / ``.done`` (the item), ``response.completed`` (with usage).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.stub_http import LoopbackStub, QuietHandler

CALL_ID = "call_mergehold_0001"
FINAL_TEXT = "Understood."


def _offers(body: dict[str, Any], name: str) -> bool:
    return any(isinstance(t, dict) and t.get("name") == name for t in body.get("tools") or [])


def _outputs(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [i for i in body.get("input") or [] if isinstance(i, dict) and i.get("type") == "function_call_output"]


class ResponsesStub(LoopbackStub):
    url_suffix = "/v1"

    def __init__(self, command: str, *, tool_name: str = "exec_command") -> None:
        self.tool_name = tool_name
        super().__init__(command)

    @property
    def tool_output(self) -> str | None:
        """The ``function_call_output`` text the CLI sent back for our call, once it has."""
        for body in self.requests:
            for item in _outputs(body):
                if item.get("call_id") == CALL_ID:
                    output = item.get("output")
                    return output if isinstance(output, str) else json.dumps(output)
        return None

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """The one output item for a request (the script)."""
        with self._lock:
            self.requests.append(body)
            number = len(self.requests)
            answered = bool(_outputs(body))
            if _offers(body, self.tool_name) and not answered and not self._issued:
                self._issued = True
                # login=false: a login shell would reset PATH from /etc/profile and lose the fake gh
                arguments = json.dumps({"cmd": self.command, "login": False})
                return {"type": "function_call", "id": "fc_mergehold_1", "call_id": CALL_ID,
                        "name": self.tool_name, "arguments": arguments}
        text = FINAL_TEXT if answered else f"Reply {number}."
        return {"type": "message", "role": "assistant", "id": f"msg_{number}",
                "content": [{"type": "output_text", "text": text}]}

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                stub.paths.append(f"GET {self.path}")
                self._send(404, "application/json", b'{"error":{"message":"not found"}}')

            def do_POST(self) -> None:
                stub.paths.append(f"POST {self.path}")
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.split("?", 1)[0].endswith("/responses"):
                    self._send(404, "application/json", b'{"error":{"message":"not found"}}')
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                item = stub.answer(body if isinstance(body, dict) else {})
                rid = f"resp_{len(stub.requests)}"
                usage = {"input_tokens": 12, "input_tokens_details": None, "output_tokens": 3,
                         "output_tokens_details": None, "total_tokens": 15}
                events: list[dict[str, Any]] = [
                    {"type": "response.created", "response": {"id": rid}},
                    {"type": "response.output_item.added", "output_index": 0, "item": item},
                    {"type": "response.output_item.done", "output_index": 0, "item": item},
                    {"type": "response.completed", "response": {"id": rid, "usage": usage}},
                ]
                data = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
                self._send(200, "text/event-stream", data.encode())

        return Handler
