"""Headless Chromium for the browser tests, driven by its command line only (no DevTools).

* :func:`find_chromium` finds Debian's Chromium; the tests never install it (``.ci/run`` does): where
  it is missing they skip, saying so (:data:`MISSING`).
* The binary is started directly (``/usr/lib/chromium/chromium``), not through Debian's wrapper
  script, which sources ``/etc/chromium.d`` (remote extensions, API keys: background traffic).
* Every run gets a fresh profile, a proxy that goes nowhere (127.0.0.1:9) and a resolver that
  resolves nothing, so no request can leave the machine; with ``--log-net-log`` Chromium writes
  every request its network stack starts. :func:`page_requests` keeps those the page made
  (initiated by a frame, isolated under the page's ``file://`` site), apart from the browser's own
  background requests (component updater, account checks: initiator "not an origin").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

DIRECT = "/usr/lib/chromium/chromium"
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-breakpad",
    "--hide-scrollbars", "--force-device-scale-factor=1", "--force-color-profile=srgb",
    "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
)
MISSING = ("chromium is not installed (Debian: apt-get install chromium; .ci/run installs it), "
           "looked for " + DIRECT + " and " + ", ".join(NAMES) + " on PATH")


def find_chromium() -> str | None:
    if os.access(DIRECT, os.X_OK):
        return DIRECT
    return next((p for p in map(shutil.which, NAMES) if p), None)


def network_namespace_prefix() -> list[str] | None:
    """``unshare`` arguments that run a command in a new network namespace (no interface but a
    down loopback), or None when this machine does not allow it."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return None
    for prefix in ([unshare, "--net"], [unshare, "--map-root-user", "--net"]):
        try:
            if subprocess.run(prefix + ["true"], capture_output=True, timeout=30).returncode == 0:
                return prefix
        except OSError:
            continue
    return None


def run(binary: str, args: Sequence[str], profile: Path, *, prefix: Sequence[str] = (),
        timeout: int = 120) -> subprocess.CompletedProcess:
    """One headless Chromium run with a fresh profile under ``profile``."""
    cmd = [*prefix, binary, *FLAGS, f"--user-data-dir={profile}", *args]
    return subprocess.run(cmd, capture_output=True, timeout=timeout, cwd=profile.parent)


def load_net_log(path: Path) -> dict:
    text = path.read_text(encoding="utf-8", errors="replace").rstrip()
    try:
        return json.loads(text)
    except ValueError:  # a log cut short: Chromium's format allows closing it by hand
        return json.loads(text.rstrip(",") + "]}")


def page_requests(log: dict) -> list[str]:
    """URLs of the requests a page made (not the browser's own background requests)."""
    types = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    out = []
    for e in log.get("events", ()):
        p = e.get("params") or {}
        if types.get(e["type"]) != "URL_REQUEST_START_JOB" or "url" not in p:
            continue
        initiator, site = p.get("initiator", ""), p.get("network_isolation_key", "")
        if initiator != "not an origin" or "file://" in site:
            out.append(p["url"])
    return out


def all_requests(log: dict) -> list[str]:
    types = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    return [e["params"]["url"] for e in log.get("events", ())
            if types.get(e["type"]) == "URL_REQUEST_START_JOB" and "url" in (e.get("params") or {})]
