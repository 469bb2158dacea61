"""The one frame loop (``forensics/io/segment.py``) against Kafka's own reading of a real segment.

The reference is ``kafka-dump-log.sh --deep-iteration --print-data-log`` run by Kafka 4.1 on the
committed real segment (``fixtures/real/kraft-tv2/dumps``): every batch's position and offsets,
every record's offset and key. Damaged copies then check what each reader of the walk relies on:
a batch whose checksum fails is framed but not a state batch, findings come in file order between
the frames, a record that breaks a rule ends its batch with the records before it kept.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from forensics.codec import crc
from forensics.errors import ForensicsError, InputError
from forensics.findings import Finding, FindingKind
from forensics.io.frames import Frame
from forensics.io.segment import SegmentWalk, unreadable

REAL = Path(__file__).resolve().parents[2] / "fixtures" / "real" / "kraft-tv2"
SEGMENT = REAL / "b-txn-aborts-0" / "00000000000000000000.log"
KAFKA_DUMP = REAL / "dumps" / "b-txn-aborts-0" / "00000000000000000000.log.dump.txt"
BATCH_LINE = re.compile(r"^baseOffset: (\d+) lastOffset: (\d+) .* isControl: (\w+) .* position: (\d+) ")
RECORD_LINE = re.compile(r"^\| offset: (\d+) .* key: (\S+) payload:")


def kafka_batches():
    """(position, base offset, last offset, control, [(offset, key), ...]) per batch, as Kafka printed them."""
    batches = []
    for line in KAFKA_DUMP.read_text().splitlines():
        m = BATCH_LINE.match(line)
        if m:
            batches.append((int(m[4]), int(m[1]), int(m[2]), m[3] == "true", []))
            continue
        m = RECORD_LINE.match(line)
        if m and not batches[-1][3]:
            batches[-1][4].append((int(m[1]), m[2]))
    return batches


def damaged_copy(tmp_path: Path, edit) -> str:
    data = bytearray(SEGMENT.read_bytes())
    edit(data)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(bytes(data))
    return str(path)


def test_frames_and_records_match_kafka():
    expected = kafka_batches()
    assert len(expected) > 5
    with SegmentWalk(str(SEGMENT), base_offset=0) as walk:
        frames = list(walk.frames())
        got = []
        for f in frames:
            records, error = walk.records(f)
            assert error is None
            keys = [] if f.header.is_control else [(r.offset, r.key.decode()) for r in records]
            got.append((f.position, f.base_offset, f.last_offset, f.header.is_control, keys))
        assert got == expected
        assert walk.findings == [] and walk.first_invalid_position is None
        assert walk.size == SEGMENT.stat().st_size


def test_batches_skip_a_failed_checksum_that_frames_keep(tmp_path):
    second = kafka_batches()[1][0]
    path = damaged_copy(tmp_path, lambda d: d.__setitem__(second + 70, d[second + 70] ^ 0xFF))
    with SegmentWalk(path, base_offset=0) as walk:
        assert [f.position for f in walk.frames()] == [b[0] for b in kafka_batches()]
    with SegmentWalk(path, base_offset=0) as walk:
        batches = [f.position for f in walk.batches()]
        assert second not in batches and len(batches) == len(kafka_batches()) - 1
        assert [f.kind for f in walk.findings] == [FindingKind.CRC_MISMATCH]


def test_items_put_findings_in_file_order(tmp_path):
    third = kafka_batches()[2][0]
    path = damaged_copy(tmp_path, lambda d: d.__setitem__(slice(third, third + 12), b"\xff" * 12))
    with SegmentWalk(path, base_offset=0) as walk:
        items = list(walk.items())
    findings = [i for i in items if type(i) is not Frame]
    assert findings and all(isinstance(i, Finding) for i in findings)
    starts = [i.position for i in items]
    assert starts == sorted(starts)  # each finding stands where its damage is, between the frames
    assert findings[0].position == third


def test_a_bad_record_ends_its_batch_keeping_those_before(tmp_path):
    first = kafka_batches()[0]
    assert len(first[4]) == 4 and not first[3]
    end = kafka_batches()[1][0]

    def break_last_record(d: bytearray) -> None:
        d[end - 1] = 0x7F  # the last record's header count: 63 headers that are not there
        d[first[0] + 17:first[0] + 21] = crc.crc32c(bytes(d[first[0] + 21:end])).to_bytes(4, "big")

    path = damaged_copy(tmp_path, break_last_record)
    with SegmentWalk(path, base_offset=0) as walk:
        frame = next(walk.batches())
        records, error = walk.records(frame)
        assert [r.offset for r in records] == [o for o, _ in first[4][:3]]
        assert isinstance(error, ForensicsError)
        finding = walk.finding(frame, "why")
        assert (finding.kind, finding.message, finding.position, finding.end_position, finding.first_offset) == \
            (FindingKind.CORRUPT_BATCH, "why", 0, end, 0)


def test_frame_at_checks_an_index_entry():
    positions = [b[0] for b in kafka_batches()]
    with SegmentWalk(str(SEGMENT)) as walk:
        assert walk.frame_at(positions[3]).base_offset == kafka_batches()[3][1]
        assert walk.frame_at(walk.size) is None


def test_what_cannot_be_opened_is_an_input_error(tmp_path):
    with pytest.raises(InputError) as err:
        SegmentWalk(str(tmp_path))  # a directory
    finding = unreadable(str(tmp_path), err.value)
    assert finding.kind is FindingKind.UNREADABLE_FILE and finding.path == str(tmp_path)
    copy = tmp_path / "copy.log"
    shutil.copyfile(SEGMENT, copy)
    with SegmentWalk(str(copy), start=kafka_batches()[2][0], end=kafka_batches()[4][0]) as walk:
        assert [f.position for f in walk.frames()] == [b[0] for b in kafka_batches()[2:4]]
