"""A scripted stand-in for the Gemini API (``generativelanguage``) on loopback, for driving the real
Gemini CLI offline (``GOOGLE_GEMINI_BASE_URL``).

The conversation request that offers ``run_shell_command`` is answered in two turns: first a
``functionCall`` that runs ``command``; the next request carries the ``functionResponse`` the CLI
produced (the hook's verdict, or the command's output), which is recorded and answered with a short
final text. Side requests (routing, next-speaker checks, token counts) get a short text or a count, so
nothing depends on their number or order. Every request body is kept.

Shapes: ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse`` answers SSE lines
``data: <GenerateContentResponse>``; ``:generateContent`` answers one JSON response; ``:countTokens``
answers ``{"totalTokens": N}``.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.stub_http import LoopbackStub, QuietHandler

SHELL_TOOL = "run_shell_command"
FINAL_TEXT = "Understood."


def _response(parts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 12, "candidatesTokenCount": 3, "totalTokenCount": 15},
            "modelVersion": "gemini-stub-1"}


def _declared(body: dict[str, Any]) -> set[str]:
    names = set()
    for tool in body.get("tools") or []:
        for decl in (tool.get("functionDeclarations") or []) if isinstance(tool, dict) else []:
            if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                names.add(decl["name"])
    return names


def _function_responses(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``functionResponse`` parts of the request's last content (what the CLI reports back)."""
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents or not isinstance(contents[-1], dict):
        return []
    parts = contents[-1].get("parts")
    if not isinstance(parts, list):
        return []
    return [p["functionResponse"] for p in parts if isinstance(p, dict) and isinstance(p.get("functionResponse"), dict)]


def response_text(response: dict[str, Any]) -> str:
    """A ``functionResponse``'s payload as one text (the CLI puts it under ``output`` or ``error``)."""
    inner = response.get("response")
    if not isinstance(inner, dict):
        return json.dumps(inner)
    return "\n".join(str(value) for value in inner.values())


class GeminiStub(LoopbackStub):
    """The Gemini API on 127.0.0.1: one ``run_shell_command`` call of ``command``, then a final text."""

    def __init__(self, command: str) -> None:
        self.function_responses: list[dict[str, Any]] = []
        super().__init__(command)

    @property
    def shell_response(self) -> dict[str, Any] | None:
        """The ``functionResponse`` the CLI sent for our shell call, once it has."""
        return next((r for r in self.function_responses if r.get("name") == SHELL_TOOL), None)

    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        with self._lock:
            self.requests.append(body)
            responses = _function_responses(body)
            self.function_responses.extend(responses)
            if SHELL_TOOL in _declared(body) and not responses and not self._issued:
                self._issued = True
                return [{"functionCall": {"name": SHELL_TOOL, "args": {"command": self.command}}}]
            number = len(self.requests)
        return [{"text": FINAL_TEXT if responses else f"Reply {number}."}]

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                stub.paths.append(f"GET {self.path}")
                self._send(404, "application/json", b'{"error":{"code":404,"status":"NOT_FOUND"}}')

            def do_POST(self) -> None:
                stub.paths.append(f"POST {self.path}")
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                path = self.path.split("?", 1)[0]
                if path.endswith(":countTokens"):
                    self._send(200, "application/json", b'{"totalTokens": 12}')
                    return
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                parts = stub.answer(body if isinstance(body, dict) else {})
                if path.endswith(":streamGenerateContent"):
                    self._send(200, "text/event-stream", f"data: {json.dumps(_response(parts))}\r\n\r\n".encode())
                elif path.endswith(":generateContent"):
                    self._send(200, "application/json", json.dumps(_response(parts)).encode())
                else:
                    self._send(404, "application/json", b'{"error":{"code":404,"status":"NOT_FOUND"}}')

        return Handler
