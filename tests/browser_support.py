"""What the browser tests share: Debian's Chromium driven by Playwright, a phone-sized page, screenshots
under `TEST_ARTIFACTS`, waiting on a condition, and the page-width check of a phone's screen."""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.conftest import ROOT

CHROMIUM = Path(shutil.which("chromium") or "/usr/bin/chromium")
"""Debian's Chromium (`/usr/bin/chromium`); tests/needs.py looks it up the same way."""
LAUNCH_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(os.environ.get("TEST_ARTIFACTS") or ROOT / ".test-artifacts") / "browser"
PHONE = {"width": 390, "height": 844}
"""A phone's screen in CSS pixels (an iPhone 12-15's)."""


def wait_for(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@contextmanager
def phone_page(sync_api: Any) -> Iterator[Any]:
    """A fresh browser and tab at a phone's size; closed afterwards."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        context = browser.new_context(viewport=PHONE)
        tab = context.new_page()
        tab.set_default_timeout(20_000)
        try:
            yield tab
        finally:
            context.close()
            browser.close()


def shot(page: Any, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [];
  if (document.documentElement.scrollWidth > width) wide.push(`page ${document.documentElement.scrollWidth}px`);
  for (const el of document.querySelectorAll('body *')) {
    const box = el.getBoundingClientRect();
    const scrolls = el.closest('.scroll, table:not(.holds)');  // tables other than holds may scroll inside
    if (!scrolls && box.width > 0 && box.right > width + 1)
      wide.push(`${el.tagName}.${el.className} ends at ${box.right}px`);
    if (el.matches('table.holds') && el.scrollWidth > el.clientWidth + 1)
      wide.push(`holds table scrolls ${el.scrollWidth}px`);
  }
  return wide.slice(0, 10);
}"""
"""Playwright `evaluate` source: what sticks out of the screen (the page, any element of `main` not
in a sideways-scrolling box, a holds table scrolling inside itself); empty when everything fits."""
