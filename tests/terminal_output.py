"""What a command wrote on a pseudo-terminal, read from its other end until the command closes it."""

import os
import select


def read_terminal(fd: int, timeout: float = 60) -> bytes:
    """Everything written to the terminal whose primary end is ``fd``, until the child closes it (EOF,
    or EIO on Linux) or nothing comes for ``timeout`` seconds."""
    out = b""
    while select.select([fd], [], [], timeout)[0]:
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        out += data
    return out
