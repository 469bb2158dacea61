"""A test that starts a JVM or a browser must say so with a marker (``pyproject.toml`` lists them).

The fast tier (``-m "not slow"``) leaves out every test marked ``slow``, and every test carrying one
of :data:`HEAVY_MARKERS` counts as ``slow`` too. For that to hold, the markers must be where the
processes are: this plugin watches, through a Python audit hook (``sys.addaudithook``), every process
the test process starts (``subprocess``, ``os.exec*``, ``os.posix_spawn``, ``os.system``) and fails
the test whose run started

* Chromium (Debian's ``/usr/lib/chromium/chromium``, ``chromium``, ``google-chrome``, ...) without a
  marker of :data:`BROWSER_MARKERS`;
* a JVM without a marker of :data:`JVM_MARKERS`: ``java`` (a ``java -version`` probe excepted),
  Spark's launchers (``spark-submit``, ``spark-class``, ...), Kafka's command-line tools
  (``kafka-*.sh``), or our own command line in a child process when it runs on Spark (``--engine
  spark``, ``--master``, or no engine chosen where the command defaults to Spark: ``auto``, which may
  pick Spark).

A process started while a test is set up, runs or is torn down counts for that test (a session
fixture that starts Spark counts for the first test that uses it). What a child process starts in
turn is not seen, except through the command-line rule above.

To add a kind of test (say ``broker``, a real Kafka broker): register the marker in
``pyproject.toml`` and add it to :data:`HEAVY_MARKERS` and :data:`JVM_MARKERS`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence

import pytest

HEAVY_MARKERS = ("spark", "jvm", "broker", "browser")  # each implies `slow`: left out of the fast tier
JVM_MARKERS = ("spark", "jvm", "broker")  # a test carrying one of these may start a JVM
BROWSER_MARKERS = ("browser",)  # a test carrying one of these may start Chromium

CHROMIUM_NAMES = frozenset({"chromium", "chromium-browser", "chrome", "google-chrome", "google-chrome-stable",
                            "headless_shell"})
SPARK_LAUNCHERS = frozenset({"spark-submit", "spark-class", "spark-shell", "spark-sql", "pyspark",
                             "start-master.sh", "start-worker.sh", "spark-daemon.sh"})
JAVA_PROBE_FLAGS = frozenset({"-version", "--version", "-fullversion", "-XshowSettings:properties"})
LOCAL_ONLY_COMMANDS = frozenset({"describe-producers", "describe", "dump", "verify-manifest"})
ENGINE_ENV = "KAFKA_FORENSICS_ENGINE"


def _tokens(argv: Sequence[str]) -> list[str]:
    """Every word of ``argv`` (a ``sh -c "..."`` string split on blanks)."""
    return [word for arg in argv for word in str(arg).split()]


def _base(word: str) -> str:
    return os.path.basename(word.rstrip("/"))


def _forensics_engine(words: list[str], env: Mapping[str, str]) -> str | None:
    """The engine a child run of our command line uses, or None when the words are not one."""
    if not any(_base(w) == "kafka-forensics" for w in words) and not any(
            a == "-m" and b.split(".")[0] == "forensics" for a, b in zip(words, words[1:])):
        return None
    for flag, value in zip(words, words[1:] + [""]):
        if flag.startswith("--engine"):
            return flag.split("=", 1)[1] if "=" in flag else value
    if any(w == "--master" or w.startswith("--master=") for w in words):
        return "spark"
    if env.get(ENGINE_ENV):
        return env[ENGINE_ENV]
    return "local" if LOCAL_ONLY_COMMANDS & set(words) else "spark"


def classify(argv: Sequence[str], env: Mapping[str, str] | None = None) -> str | None:
    """``"browser"``, ``"jvm"`` or None for a process started with ``argv`` and ``env`` (None: ours)."""
    words = _tokens(argv)
    names = [_base(w) for w in words]
    if CHROMIUM_NAMES & set(names):
        return "browser"
    if SPARK_LAUNCHERS & set(names) or any(n.startswith("kafka-") and n.endswith(".sh") for n in names):
        return "jvm"
    for i, name in enumerate(names):
        if name == "java" and not (words[i + 1:] and set(words[i + 1:]) <= JAVA_PROBE_FLAGS):
            return "jvm"
    engine = _forensics_engine(words, os.environ if env is None else env)
    return "jvm" if engine == "spark" else None


def _argv_env(event: str, args: tuple) -> tuple:
    """(argv, env) of an audit event that starts a process, else (None, None)."""
    if event == "subprocess.Popen":  # executable, args, cwd, env
        argv = args[1]
        return ([argv] if isinstance(argv, (str, bytes, os.PathLike)) else list(argv or [])), args[3]
    if event in ("os.exec", "os.posix_spawn"):  # path, argv, env
        return list(args[1] or [args[0]]), args[2]
    if event == "os.spawn":  # mode, path, argv, env
        return list(args[2] or [args[1]]), args[3]
    if event == "os.system":  # command
        return [args[0]], None
    return None, None


class ProcessGuard:
    """The pytest plugin (registered by ``tests/conftest.py``)."""

    def __init__(self) -> None:
        self.current: pytest.Item | None = None
        self.started: dict[str, list[tuple]] = {}
        sys.addaudithook(self._audit)

    def _audit(self, event: str, args: tuple) -> None:
        item = self.current
        if item is None or not event.startswith(("subprocess.", "os.")):
            return
        try:
            argv, env = _argv_env(event, args)
            if argv is None:
                return
            argv = [os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a) for a in argv]
            kind = classify(argv, env)
        except Exception:  # an audit hook must never break the call it watches
            return
        if kind is not None:
            self.started.setdefault(item.nodeid, []).append((kind, " ".join(argv)[:200]))

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, items: Iterable[pytest.Item]) -> None:
        for item in items:
            if any(item.get_closest_marker(m) for m in HEAVY_MARKERS) and not item.get_closest_marker("slow"):
                item.add_marker(pytest.mark.slow)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem):
        self.current = item
        try:
            yield
        finally:
            self.current = None
            self.started.pop(item.nodeid, None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call):
        outcome = yield
        report = outcome.get_result()
        if call.when != "teardown" or not report.passed:
            return
        missing = unmarked(item, self.started.get(item.nodeid, []))
        if missing:
            report.outcome = "failed"
            report.longrepr = "\n".join(missing)


def unmarked(item: pytest.Item, started: list[tuple]) -> list[str]:
    """One line per process ``item`` started without the marker it needs."""
    needs = {"jvm": JVM_MARKERS, "browser": BROWSER_MARKERS}
    out = []
    for kind, command in started:
        if not any(item.get_closest_marker(m) for m in needs[kind]):
            wanted = " or ".join(f"@pytest.mark.{m}" for m in needs[kind])
            out.append(f"{item.nodeid} started a {'JVM' if kind == 'jvm' else 'browser'} without {wanted} "
                       f"(the fast tier -m 'not slow' must leave it out): {command}")
    return out
