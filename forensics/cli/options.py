"""Options shared by several commands: the analysis time."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Optional

import typer

from forensics.cli.app import EXIT_USAGE, fail

AS_OF = typer.Option(None, "--as-of", help="Analysis time (epoch ms or ISO-8601). Default: the newest timestamp "
                     "on the inputs, never this machine's clock.")


def parse_time(text: Optional[str]) -> Optional[int]:
    """Epoch milliseconds, or an ISO-8601 time (UTC unless it says otherwise)."""
    if text is None:
        return None
    if text.lstrip("-").isdigit():
        return int(text)
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise fail(f"--as-of {text!r}: give epoch milliseconds or an ISO-8601 time such as 2026-11-20T21:50:00Z",
                   EXIT_USAGE) from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=timezone.utc)
    return int(t.timestamp() * 1000)


def format_time(ms: Optional[int]) -> str:
    if ms is None:
        return "unknown"
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).isoformat(timespec="milliseconds") + f" ({ms})"
