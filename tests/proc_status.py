"""What ``/proc/PID/status`` says of a running process's memory (Linux)."""

from __future__ import annotations


def status_kib(pid: int, field: str) -> int:
    """The value in kB of ``field`` (``VmHWM``, ``RssAnon``, ...) for process ``pid``, 0 when it cannot be
    read (not Linux, the process gone)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0
