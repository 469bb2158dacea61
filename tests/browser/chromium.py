"""Headless Chromium for the browser tests, driven by its command line only (no DevTools).

* :func:`ensure_chromium` finds Debian's Chromium, or installs it (``apt-get install chromium``)
  when it is missing and this process may (root, apt-get present): the tests skip only when it is
  missing and cannot be installed.
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
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

DIRECT = "/usr/lib/chromium/chromium"
NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
    "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-default-apps", "--disable-breakpad",
    "--hide-scrollbars", "--force-device-scale-factor=1", "--force-color-profile=srgb",
    "--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
)


def find_chromium() -> Optional[str]:
    if os.access(DIRECT, os.X_OK):
        return DIRECT
    return next((p for p in map(shutil.which, NAMES) if p), None)


def ensure_chromium() -> Tuple[Optional[str], str]:
    """(binary, "") or (None, why it is missing and could not be installed)."""
    found = find_chromium()
    if found:
        return found, ""
    if os.environ.get("KAFKA_FORENSICS_NO_BROWSER_INSTALL"):
        return None, "chromium is not installed (KAFKA_FORENSICS_NO_BROWSER_INSTALL set: not installing it)"
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        return None, ("chromium is not installed and cannot be installed here (needs root and apt-get: "
                      "apt-get install chromium)")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in ([apt, "update", "-q"], [apt, "install", "-y", "-q", "--no-install-recommends", "chromium"]):
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=1800)
        if p.returncode != 0:
            return None, f"chromium is not installed and `{' '.join(cmd)}` failed: {p.stderr.strip()[-300:]}"
    found = find_chromium()
    return (found, "") if found else (None, "apt-get installed chromium, but no chromium binary was found")


def network_namespace_prefix() -> Optional[List[str]]:
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


def page_requests(log: dict) -> List[str]:
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


def all_requests(log: dict) -> List[str]:
    types = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    return [e["params"]["url"] for e in log.get("events", ())
            if types.get(e["type"]) == "URL_REQUEST_START_JOB" and "url" in (e.get("params") or {})]
