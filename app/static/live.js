// Live pages: every second this page asks the server for itself again (a conditional GET: 304 when
// nothing changed) and swaps in each region marked data-live="NAME" whose content changed, so a hold
// placed in another tab, by chat or by a worker shows within a second or two without a reload. Forms
// outside those regions keep what is being typed. Without this script the pages work the same and
// change on a reload. Same origin only (the CSP allows script and fetch from 'self' alone).
(function () {
  "use strict";
  var PERIOD_MS = 1000;
  var etag = null;
  var busy = false;

  function regions() {
    return document.querySelectorAll("[data-live]");
  }

  function swap(html) {
    var fresh = new DOMParser().parseFromString(html, "text/html");
    regions().forEach(function (old) {
      var name = old.getAttribute("data-live");
      var next = fresh.querySelector('[data-live="' + name + '"]');
      if (next && next.innerHTML !== old.innerHTML) {
        old.replaceWith(document.importNode(next, true));
      }
    });
    document.documentElement.setAttribute("data-live-at", String(Date.now()));
  }

  function tick() {
    if (busy || document.hidden || !regions().length) return;
    busy = true;
    var headers = { "X-Merge-Hold-Live": "1" };
    if (etag) headers["If-None-Match"] = etag;
    fetch(window.location.href, { headers: headers, cache: "no-store", credentials: "same-origin", redirect: "manual" })
      .then(function (answer) {
        if (answer.status !== 200) return null;  // 304: unchanged; a redirect: signed out, left for a reload
        etag = answer.headers.get("ETag");
        return answer.text();
      })
      .then(function (html) { if (html) swap(html); })
      .catch(function () {})
      .finally(function () { busy = false; });
  }

  window.setInterval(tick, PERIOD_MS);
  document.addEventListener("visibilitychange", tick);
})();
