"""The App's webhook deliveries: cursor-paginated list, one delivery, and redelivery attempts."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlencode

from tests.emulator.state import Delivery
from tests.emulator.wire import Request, Response, Route, error, not_found, per_page, route
from tests.emulator.world import World

log = logging.getLogger(__name__)
DOCS = "https://docs.github.com/rest/apps/webhooks#list-deliveries-for-an-app-webhook"


def _newest_first(world: World) -> list[Delivery]:
    return sorted(world.deliveries.values(), key=lambda d: (d.delivered_at, d.id), reverse=True)


def list_deliveries(world: World, req: Request) -> Response:
    """Unlike page-numbered lists, this one pages with an opaque `cursor` and only a rel="next" link."""
    items = _newest_first(world)
    start = 0
    cursor = req.query.get("cursor")
    if cursor:
        ids = [f"v1_{d.id}" for d in items]
        if cursor not in ids:
            return error(422, "Validation Failed", DOCS,
                         errors=[{"resource": "Delivery", "field": "cursor", "code": "invalid"}])
        start = ids.index(cursor)
    size = per_page(req.query)
    chunk = items[start:start + size]
    headers: dict[str, str] = {}
    if start + size < len(items):
        query = {k: v for k, v in req.query.items() if k != "cursor"}
        query["cursor"] = f"v1_{items[start + size].id}"
        headers["link"] = f'<{req.base}{req.path}?{urlencode(query)}>; rel="next"'
    return Response(200, [d.as_dict() for d in chunk], headers)


def get_delivery(world: World, req: Request) -> Response:
    delivery = world.deliveries.get(int(req.params["id"]))
    if delivery is None:
        return not_found(DOCS)
    body: dict[str, Any] = delivery.as_dict()
    body.update(url=None, throttled_at=None, request={"headers": {}, "payload": None},
                response={"headers": {}, "payload": None})
    return Response(200, body)


def redeliver(world: World, req: Request) -> Response:
    original = world.deliveries.get(int(req.params["id"]))
    if original is None:
        return not_found(DOCS)
    world.redeliveries.append(original.id)
    callback = world.on_redeliver
    snapshot = original.as_dict()

    def deliver_again() -> None:
        # Runs outside the lock: the callback may well post the payload to an app that calls us back.
        status_code = 200
        if callback is not None:
            try:
                status_code = callback(snapshot) or 200
            except Exception:
                log.exception("on_redeliver callback failed for delivery %s", original.id)
                status_code = 500
        with world.lock:
            again = Delivery(world.next_id(), original.guid, world.clock(), True, 0.05, status_code,
                             original.event, original.action, original.installation_id,
                             original.repository_id)
            world.deliveries[again.id] = again

    return Response(202, {}, after=deliver_again)


ROUTES: list[Route] = [
    route("GET", "/app/hook/deliveries", "jwt", list_deliveries),
    route("GET", "/app/hook/deliveries/{id}", "jwt", get_delivery),
    route("POST", "/app/hook/deliveries/{id}/attempts", "jwt", redeliver),
]
