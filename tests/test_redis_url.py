"""`core.redis_url` and REDIS_URL validation: the URL forms of design §5, Sentinel included."""

from __future__ import annotations

import pytest

from core.redis_url import RedisUrlError, SentinelTarget, check, parse_sentinel
from foundation.redis_conn import describe
from foundation.settings import SettingsError, from_env


@pytest.mark.parametrize(("url", "target"), [
    ("redis+sentinel://s1:26379/mymaster", SentinelTarget((("s1", 26379),), "mymaster")),
    ("redis+sentinel://s1:1,s2:2,s3/svc/3", SentinelTarget((("s1", 1), ("s2", 2), ("s3", 26379)), "svc", 3)),
    ("rediss+sentinel://u:p%40ss@s1:5/svc", SentinelTarget((("s1", 5),), "svc", 0, True, "u", "p@ss")),
    ("redis+sentinel://secret@s1:5/svc/", SentinelTarget((("s1", 5),), "svc", 0, False, None, "secret")),
    ("redis+sentinel://:pw@[::1]:26379/svc", SentinelTarget((("::1", 26379),), "svc", 0, False, None, "pw")),
    ("REDIS+SENTINEL://s1:5/svc", SentinelTarget((("s1", 5),), "svc")),
    ("redis+sentinel://u:p:q@s1:5/svc", SentinelTarget((("s1", 5),), "svc", 0, False, "u", "p:q")),
])
def test_sentinel_urls(url: str, target: SentinelTarget) -> None:
    assert parse_sentinel(url) == target
    check(url)


@pytest.mark.parametrize("url", [
    "redis+sentinel://",
    "redis+sentinel:///svc",
    "redis+sentinel://s1:26379",
    "redis+sentinel://s1:26379/",
    "redis+sentinel://s1:0/svc",
    "redis+sentinel://s1:99999/svc",
    "redis+sentinel://s1:port/svc",
    "redis+sentinel://s1:1,,s2:2/svc",
    "redis+sentinel://s1:1/svc/db",
    "redis+sentinel://s1:1/svc/0/extra",
    "redis+sentinel://s1:1/svc?ssl=1",
    "redis+sentinel://s 1:1/svc",
    "redis+sentinel://s1:1/sv c",
    "sentinel://s1:1/svc",
    "localhost:6379",
    "http://redis:6379",
    "redis://",
    "",
])
def test_rejected_urls(url: str) -> None:
    with pytest.raises(RedisUrlError):
        check(url)


@pytest.mark.parametrize("url", ["redis://r", "redis://:pw@r:6380/2", "rediss://r/0", "unix:///run/redis.sock?db=1",
                                 "redis+sentinel://a:1,b:2/svc/1", "rediss+sentinel://u:p@a:1/svc"])
def test_settings_accept(url: str) -> None:
    assert from_env({"REDIS_URL": url}).redis_url == url


def test_settings_error_never_shows_the_password() -> None:
    with pytest.raises(SettingsError) as error:
        from_env({"REDIS_URL": "redis+sentinel://u:hunter2@s1:bad/svc"})
    assert str(error.value).startswith("REDIS_URL:")
    assert "hunter2" not in str(error.value)
    assert "hunter2" not in describe("redis+sentinel://u:hunter2@s1:1/svc")
    assert "hunter2" not in describe("redis://u:hunter2@r:6379/0")
