"""The live pages' refresh (`static/live.js`): a page asks for itself again with ``X-Merge-Hold-Live``,
and gets 304 when nothing changed. The page is rendered either way (it is a few Redis reads); what the
ETag saves is sending it and swapping it in. A refresh never takes the page's flash messages
(`base.html`)."""

from __future__ import annotations

from flask import Flask, Response, request

HEADER = "X-Merge-Hold-Live"


def install(app: Flask) -> None:
    @app.after_request
    def conditional(response: Response) -> Response:
        if request.method == "GET" and request.headers.get(HEADER) and response.status_code == 200 \
                and response.mimetype == "text/html":
            response.add_etag()
            response.make_conditional(request)
        if response.mimetype == "text/html":
            response.headers.setdefault("Cache-Control", "no-store")  # a signed-in page, always fresh
        return response
