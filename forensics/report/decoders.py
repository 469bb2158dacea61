"""Record texts for the dump, as Kafka 4.1's ``kafka-dump-log.sh`` prints them.

Control records print their marker or KRaft control message; with ``--print-data-log`` data
records print ``key``/``payload`` through the chosen decoder: UTF-8 strings by default
(Kafka's ``StringDecoder``), or ``--transaction-log-decoder``, ``--offsets-decoder``,
``--cluster-metadata-decoder``.
"""

from __future__ import annotations

from forensics.codec.batch import BatchHeader
from forensics.codec.control import format_control_record
from forensics.codec.java_reader import java_string
from forensics.report.dump_rows import BatchRow, DecodedText

DECODERS = ("transaction-log", "offsets", "cluster-metadata")


def string_text(data: bytes | None) -> str | None:
    """Kafka's default ``StringDecoder`` (``new String(bytes, UTF_8)``): malformed UTF-8 replaced
    as Java replaces it (:func:`~forensics.codec.java_reader.java_string`); null stays null."""
    return None if data is None else java_string(data)


def string_texts(key: bytes | None, value: bytes | None) -> DecodedText:
    return DecodedText(None, string_text(key), string_text(value))


def data_texts(key: bytes | None, value: bytes | None, offset: int, decoder: str | None) -> DecodedText:
    if decoder is None:
        return string_texts(key, value)
    if decoder == "transaction-log":
        from forensics.codec.txnlog_text import format_record_key_and_value

        k, v = format_record_key_and_value(key, value, offset)
        return DecodedText(key=k, payload=v)
    if decoder == "offsets":
        from forensics.codec.offsets import format_offsets_record

        k, v = format_offsets_record(key, value, offset)
        return DecodedText(key=k, payload=v)
    if decoder == "cluster-metadata":
        from forensics.codec.metadata_records import format_metadata_record

        return DecodedText(key=None, payload=format_metadata_record(value, offset))
    raise ValueError(f"unknown decoder {decoder!r}")


def record_texts(batch: BatchRow, record, decoder: str | None, print_contents: bool,
                 skip_metadata: bool) -> DecodedText:
    header = batch.header
    is_control = isinstance(header, BatchHeader) and header.is_control  # a v2 batch's (magic 2) header
    if is_control:
        if skip_metadata:
            return DecodedText()
        return DecodedText(control=format_control_record(record.key, record.value))
    if not print_contents:
        return DecodedText()
    return data_texts(record.key, record.value, record.offset, decoder)
