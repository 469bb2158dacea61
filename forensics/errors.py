"""One error tree for everything kafka-forensics raises on bad input.

Every corrupt-input error carries where it happened: the file path (filled in by the
layer that opened the file), the byte position inside that file and, when known, the
Kafka offset. Pure codec functions work on buffers and know positions but not paths;
the io layer attaches the path with :meth:`ForensicsError.at`.
"""

from __future__ import annotations

from forensics.exit_codes import EXIT_CORRUPT, EXIT_INPUT, EXIT_USAGE


class ForensicsError(Exception):
    """Base class: the only exception type allowed to escape io/codec on bad input."""

    exit_code = EXIT_USAGE

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        position: int | None = None,
        offset: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.position = position
        self.offset = offset

    def at(
        self,
        path: str | None = None,
        position: int | None = None,
        offset: int | None = None,
    ) -> ForensicsError:
        """Fill in location fields that are still unknown; returns self for chaining."""
        if self.path is None:
            self.path = path
        if self.position is None:
            self.position = position
        if self.offset is None:
            self.offset = offset
        return self

    def where(self) -> str:
        parts = []
        if self.path is not None:
            parts.append(self.path)
        if self.position is not None:
            parts.append(f"byte {self.position}")
        if self.offset is not None:
            parts.append(f"offset {self.offset}")
        return ", ".join(parts)

    def __str__(self) -> str:
        where = self.where()
        return f"{where}: {self.message}" if where else self.message


class InputError(ForensicsError):
    """A path given by the user cannot be used (missing, wrong type, unreadable)."""

    exit_code = EXIT_INPUT


class NotASegmentError(ForensicsError):
    """The file is not a Kafka file of the type its name claims."""

    exit_code = EXIT_CORRUPT


class CorruptInputError(ForensicsError):
    """Bytes that do not decode as the format says they must."""

    exit_code = EXIT_CORRUPT


class CorruptBatchError(CorruptInputError):
    """A record batch (any magic) whose header, records or checksum are invalid."""


class CorruptRecordError(CorruptBatchError):
    """A record inside a batch is malformed."""


class UnsupportedMagicError(CorruptBatchError):
    """A batch declares a magic byte other than 0, 1 or 2."""


class UnsupportedCodecError(CorruptBatchError):
    """A batch declares a compression codec id that is invalid for its magic."""


class CompressionError(CorruptBatchError):
    """A compressed payload could not be decompressed."""


class CorruptIndexError(CorruptInputError):
    """An .index, .timeindex or .txnindex file is malformed."""


class CorruptSnapshotError(CorruptInputError):
    """A producer-state .snapshot file is malformed or fails its CRC."""


class CorruptCheckpointError(CorruptInputError):
    """A checkpoint or properties text file is malformed."""


class CorruptTransactionLogError(CorruptInputError):
    """A __transaction_state key or value cannot be decoded."""


class UsageError(ForensicsError):
    """A value given on the command line that cannot be used: it names nothing in the evidence (a
    topic, broker, transactional id or cluster that is not there) or contradicts another."""

    exit_code = EXIT_USAGE
