"""Scale: dumping a ~300 MB segment (deep iteration + print-data-log, text renderer to /dev/null)
keeps private memory flat.

The segment is mmapped read-only, so its pages count as file-backed (RssFile) and are reclaimable;
what must stay small is the anonymous memory (RssAnon in /proc/self/status): Python objects,
decompressed payloads, rows. The dump runs in a fresh subprocess whose RssAnon is sampled by
the parent every ~2 ms from ``/proc/<pid>/status`` (outside the child, so no GIL effects) from
the end of its imports to its exit; the peak must stay under 150 MB.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from fixtures.generator import build_large_segment
from tests.proc_status import status_kib

REPO = Path(__file__).resolve().parents[2]
TARGET_BYTES = 300 * 1024 * 1024
LIMIT_MB = 150

CHILD = textwrap.dedent("""
    import json, os, sys, time

    def status():
        out = {}
        with open("/proc/self/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("RssAnon", "RssFile", "VmHWM"):
                    out[key] = int(value.split()[0])  # kB
        return out

    from forensics.render.dump_text import render_dump_text
    from forensics.report.dump import DumpOptions, dump_file
    from forensics.report.dump_rows import BatchRow, DataRecords, RecordRow

    baseline = status()["RssAnon"]
    sys.stdout.write("ready\\n")
    sys.stdout.flush()
    counts = {"batches": 0, "records": 0}

    def counted(rows):
        for row in rows:
            t = type(row)
            if t is RecordRow:
                counts["records"] += 1
            elif t is DataRecords:
                counts["records"] += len(row.records)
            elif t is BatchRow:
                counts["batches"] += 1
            yield row

    started = time.time()
    with open(os.devnull, "w") as out:
        findings = render_dump_text(counted(dump_file(sys.argv[1], DumpOptions(deep_iteration=True,
                                                                               print_data_log=True))), out, out)
    final = status()
    print(json.dumps(dict(counts, findings=findings, seconds=round(time.time() - started, 2), baseline_anon_kb=baseline,
                          final_anon_kb=final["RssAnon"], vmhwm_kb=final["VmHWM"], rss_file_kb=final["RssFile"])))
""")


def rss_anon_kb(pid: int) -> int:
    return status_kib(pid, "RssAnon")


def run_sampled(args, timeout: float = 300.0):
    """Run the child; sample its RssAnon from outside (every ~2 ms, no GIL involved) once it
    says ``ready`` (imports done). Returns (returncode, last stdout line, stderr, peak kB, samples)."""
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        peak, samples, deadline = 0, 0, time.monotonic() + timeout
        while proc.poll() is None and time.monotonic() < deadline:
            peak = max(peak, rss_anon_kb(proc.pid))
            samples += 1
            time.sleep(0.002)
        out, err = proc.communicate(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, out.strip().splitlines()[-1] if out.strip() else "", err, peak, samples


@pytest.mark.slow
@pytest.mark.parametrize("codec", [0, 4], ids=["none", "zstd"])
def test_dump_of_a_300_mb_segment_keeps_anonymous_memory_flat(tmp_path: Path, codec: int) -> None:
    if shutil.disk_usage(tmp_path).free < 2 * 1024 ** 3:
        pytest.skip("needs 2 GB of free disk")
    if not Path("/proc/self/status").is_file():
        pytest.skip("needs /proc/self/status (Linux)")
    # 8 records of 2 KiB per data batch, a 78-byte marker after every 16: ~15.7 KB per batch
    # uncompressed, ~13 KB with zstd (the values are printable noise)
    n_batches = TARGET_BYTES // (15_700 if codec == 0 else 13_000)
    info = build_large_segment(tmp_path / "00000000000000000000.log", n_batches, records_per_batch=8,
                               value_size=2048, marker_every=16, codec=codec)
    assert info.size >= 250 * 1024 * 1024
    code, line, err, peak_kb, samples = run_sampled([sys.executable, "-c", CHILD, str(info.path)])
    assert code == 0, err
    result = json.loads(line)
    result.update(peak_anon_kb=max(peak_kb, result["final_anon_kb"]), samples=samples)
    print(f"\nsegment {info.size / 2**20:.0f} MiB, {info.batches} batches, {info.records} records: {result}")
    assert result["findings"] == 0
    assert samples >= 100, "RssAnon was not sampled while the dump ran"
    assert result["batches"] == info.batches and result["records"] == info.records + (info.batches - info.records // 8)
    assert result["peak_anon_kb"] < LIMIT_MB * 1024, f"peak RssAnon {result['peak_anon_kb'] / 1024:.0f} MB"
