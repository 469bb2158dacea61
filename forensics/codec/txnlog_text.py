"""The text ``kafka-dump-log.sh --transaction-log-decoder`` prints for a ``__transaction_state``
record (Kafka 4.1 ``DumpLogSegments.TransactionLogMessageParser``): the key and value as the generated
``*JsonConverter`` classes write them through Jackson, and the skip messages in
``CoordinatorRecordSerde``'s words. The records are decoded by :mod:`forensics.codec.txnlog`.
"""

from __future__ import annotations

from collections.abc import Callable

from forensics.codec.schema_json import json_string
from forensics.codec.txnlog import (
    PartitionsSchema,
    TransactionLogKey,
    TransactionLogValue,
    UnknownTransactionLogKey,
    decode_key,
    decode_value,
)
from forensics.errors import CorruptTransactionLogError


def format_key_json(key: TransactionLogKey) -> str:
    """``{"type":"0","data":{"transactionalId":"..."}}`` as printed by DumpLogSegments 4.1."""
    return '{"type":"%d","data":{"transactionalId":%s}}' % (key.version, json_string(key.transactional_id))


def _partitions_json(parts: tuple[PartitionsSchema, ...] | None) -> str:
    if parts is None:
        return "null"
    items = (
        '{"topic":%s,"partitionIds":[%s]}' % (json_string(p.topic), ",".join(map(str, p.partition_ids)))
        for p in parts
    )
    return "[" + ",".join(items) + "]"


def format_value_json(value: TransactionLogValue | None) -> str:
    """The ``payload:`` text of DumpLogSegments 4.1 (``<DELETE>`` for a tombstone).

    Field order is the schema's declaration order (so tags 0/1 sit between producerId and
    producerEpoch); tagged fields appear only when different from their default and only for
    v1+. Tags unknown to the 4.1 schema (including tag 3, NextProducerEpoch) are not printed.
    """
    if value is None:
        return "<DELETE>"
    v = value
    out = ['{"version":"%d","data":{"producerId":%d' % (v.version, v.producer_id)]
    flexible = v.version >= 1
    if flexible and v.previous_producer_id != -1:
        out.append(',"previousProducerId":%d' % v.previous_producer_id)
    if flexible and v.next_producer_id != -1:
        out.append(',"nextProducerId":%d' % v.next_producer_id)
    out.append(',"producerEpoch":%d,"transactionTimeoutMs":%d,"transactionStatus":%d'
               % (v.producer_epoch, v.transaction_timeout_ms, v.status_id))
    out.append(',"transactionPartitions":' + _partitions_json(v.partitions))
    out.append(',"transactionLastUpdateTimestampMs":%d,"transactionStartTimestampMs":%d'
               % (v.last_update_timestamp_ms, v.start_timestamp_ms))
    if flexible and v.client_transaction_version != 0:
        out.append(',"clientTransactionVersion":%d' % v.client_transaction_version)
    out.append("}}")
    return "".join(out)


def format_record_key_and_value(key, value, offset: int) -> tuple[str, str | None]:
    """What ``DumpLogSegments --transaction-log-decoder`` prints after ``key:`` and ``payload:``
    for one record (``None`` = no payload part), including its skip messages:

    * unknown record type: ``Unknown record type N at offset O, skipping.`` and no payload;
    * undecodable key/value: ``Error at offset O, skipping. <reason>`` and no payload. The
      ``Could not read ...`` framing follows ``CoordinatorRecordSerde``; the reason text after
      ``due to:`` is ours, not Java's exception message.

    A null key makes Kafka's tool abort; we raise :class:`CorruptTransactionLogError`.
    """
    if key is None:
        raise CorruptTransactionLogError(f"Failed to decode message at offset {offset} using the specified decoder "
                 "(message had a missing key)", offset=offset)
    decoded_key, error = _read_part(decode_key, key, "key")
    if error is None and isinstance(decoded_key, UnknownTransactionLogKey):
        return f"Unknown record type {decoded_key.version} at offset {offset}, skipping.", None
    if error is None and value is None:
        return format_key_json(decoded_key), "<DELETE>"
    if error is None:
        decoded_value, error = _read_part(decode_value, value, "value")
    if error is not None:
        return f"Error at offset {offset}, skipping. {error}", None
    return format_key_json(decoded_key), format_value_json(decoded_value)


def _read_part(decode: Callable, buf, what: str):
    """(decoded, None), or (None, why) in ``CoordinatorRecordSerde``'s words."""
    if len(buf) < 2:
        return None, f"Could not read version from {what}'s buffer."
    try:
        return decode(buf), None
    except CorruptTransactionLogError as exc:
        version = int.from_bytes(bytes(buf[:2]), "big", signed=True)
        return None, f"Could not read record with version {version} from {what}'s buffer due to: {exc.message}."
