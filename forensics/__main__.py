"""The entry point of ``python -m forensics`` and of the ``kafka-forensics`` script.

Ctrl-C while the program is still loading (its imports take a moment) has nothing to clean up:
it says so in one line and exits 130, without a traceback; the CLI takes over from there.
"""

import os
import signal
import threading


def _interrupted_while_loading(signum, frame) -> None:
    os.write(2, b"kafka-forensics: interrupted\n")
    os._exit(130)


def run() -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _interrupted_while_loading)
    from forensics.cli.app import main

    main()


if __name__ == "__main__":
    run()
