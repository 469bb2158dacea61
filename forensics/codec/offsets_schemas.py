"""The ``__consumer_offsets`` record schemas: a declarative table, one entry per record type, and the
consumer protocol's subscription and assignment embedded in group metadata.

From ``group-coordinator/src/main/resources/common/message/*.json`` and
``clients/src/main/resources/common/message/ConsumerProtocol*.json``, read and rendered by
:mod:`forensics.codec.schema`; :mod:`forensics.codec.offsets` decodes with them.
"""

from __future__ import annotations

from forensics.codec.schema import F, Message, S, parse_versions


def _key(name: str, api_key: int, *fields) -> Message:
    return Message(name, parse_versions("0"), None, list(fields), api_key=api_key)


def _offset_commit_value_fields():
    return [
        F("offset", "int64"),
        F("leaderEpoch", "int32", "3+", default=-1, ignorable=True),
        F("metadata", "string"),
        F("commitTimestamp", "int64"),
        F("expireTimestamp", "int64", "1", default=-1, ignorable=True),
    ]


_MEMBER_METADATA = S(
    "MemberMetadata",
    [
        F("memberId", "string"),
        F("groupInstanceId", "string", "3+", nullable="3+", default="null", ignorable=True),
        F("clientId", "string"),
        F("clientHost", "string"),
        F("rebalanceTimeout", "int32", "1+", default=-1, ignorable=True),
        F("sessionTimeout", "int32"),
        F("subscription", "bytes"),
        F("assignment", "bytes"),
    ],
)

_CG_TOPIC_PARTITIONS = S("TopicPartitions", [F("topicId", "uuid"), F("partitions", "[]int32")])

# record type -> (key message, value message)
RECORDS: dict[int, tuple[Message, Message]] = {
    0: (
        _key("LegacyOffsetCommitKey", 0, F("group", "string"), F("topic", "string"), F("partition", "int32")),
        Message("LegacyOffsetCommitValue", parse_versions("0"), None, _offset_commit_value_fields(), api_key=0),
    ),
    1: (
        _key("OffsetCommitKey", 1, F("group", "string"), F("topic", "string"), F("partition", "int32")),
        Message("OffsetCommitValue", parse_versions("0-4"), parse_versions("4+"), _offset_commit_value_fields(), api_key=1),
    ),
    2: (
        _key("GroupMetadataKey", 2, F("group", "string")),
        Message(
            "GroupMetadataValue",
            parse_versions("0-4"),
            parse_versions("4+"),
            [
                F("protocolType", "string"),
                F("generation", "int32"),
                F("protocol", "string", nullable="0+"),
                F("leader", "string", nullable="0+"),
                F("currentStateTimestamp", "int64", "2+", default=-1, ignorable=True),
                F("members", "[]struct", struct=_MEMBER_METADATA),
            ],
            api_key=2,
            common=[_MEMBER_METADATA],
        ),
    ),
    3: (
        _key("ConsumerGroupMetadataKey", 3, F("groupId", "string")),
        Message("ConsumerGroupMetadataValue", parse_versions("0"), parse_versions("0+"), [F("epoch", "int32")], api_key=3),
    ),
    4: (
        _key("ConsumerGroupPartitionMetadataKey", 4, F("groupId", "string")),
        Message(
            "ConsumerGroupPartitionMetadataValue",
            parse_versions("0"),
            parse_versions("0+"),
            [
                F(
                    "topics",
                    "[]struct",
                    struct=S(
                        "TopicMetadata",
                        [
                            F("topicId", "uuid"),
                            F("topicName", "string"),
                            F("numPartitions", "int32"),
                            F(
                                "partitionMetadata",
                                "[]struct",
                                struct=S("PartitionMetadata", [F("partition", "int32"), F("racks", "[]string")]),
                            ),
                        ],
                    ),
                )
            ],
            api_key=4,
        ),
    ),
    5: (
        _key("ConsumerGroupMemberMetadataKey", 5, F("groupId", "string"), F("memberId", "string")),
        Message(
            "ConsumerGroupMemberMetadataValue",
            parse_versions("0"),
            parse_versions("0+"),
            [
                F("instanceId", "string", nullable="0+"),
                F("rackId", "string", nullable="0+"),
                F("clientId", "string"),
                F("clientHost", "string"),
                F("subscribedTopicNames", "[]string"),
                F("subscribedTopicRegex", "string", nullable="0+"),
                F("rebalanceTimeoutMs", "int32", default=-1),
                F("serverAssignor", "string", nullable="0+"),
                F(
                    "classicMemberMetadata",
                    "struct",
                    nullable="0+",
                    default="null",
                    tagged="0+",
                    tag=0,
                    struct=S(
                        "ClassicMemberMetadata",
                        [
                            F("sessionTimeoutMs", "int32"),
                            F(
                                "supportedProtocols",
                                "[]struct",
                                struct=S("ClassicProtocol", [F("name", "string"), F("metadata", "bytes")]),
                            ),
                        ],
                    ),
                ),
            ],
            api_key=5,
        ),
    ),
    6: (
        _key("ConsumerGroupTargetAssignmentMetadataKey", 6, F("groupId", "string")),
        Message(
            "ConsumerGroupTargetAssignmentMetadataValue",
            parse_versions("0"),
            parse_versions("0+"),
            [F("assignmentEpoch", "int32")],
            api_key=6,
        ),
    ),
    7: (
        _key("ConsumerGroupTargetAssignmentMemberKey", 7, F("groupId", "string"), F("memberId", "string")),
        Message(
            "ConsumerGroupTargetAssignmentMemberValue",
            parse_versions("0"),
            parse_versions("0+"),
            [
                F(
                    "topicPartitions",
                    "[]struct",
                    struct=S("TopicPartition", [F("topicId", "uuid"), F("partitions", "[]int32")]),
                )
            ],
            api_key=7,
        ),
    ),
    8: (
        _key("ConsumerGroupCurrentMemberAssignmentKey", 8, F("groupId", "string"), F("memberId", "string")),
        Message(
            "ConsumerGroupCurrentMemberAssignmentValue",
            parse_versions("0"),
            parse_versions("0+"),
            [
                F("memberEpoch", "int32"),
                F("previousMemberEpoch", "int32"),
                F("state", "int8"),
                F("assignedPartitions", "[]struct", struct=_CG_TOPIC_PARTITIONS),
                F("partitionsPendingRevocation", "[]struct", struct=_CG_TOPIC_PARTITIONS),
            ],
            api_key=8,
            common=[_CG_TOPIC_PARTITIONS],
        ),
    ),
}

RECORD_TYPE_NAMES: dict[int, str] = {t: km.name[: -len("Key")] for t, (km, _) in RECORDS.items()}

CONSUMER_PROTOCOL_SUBSCRIPTION = Message(
    "ConsumerProtocolSubscription",
    parse_versions("0-3"),
    None,
    [
        F("topics", "[]string"),
        F("userData", "bytes", nullable="0+", default="null", zero_copy=True),
        F(
            "ownedPartitions",
            "[]struct",
            "1+",
            ignorable=True,
            struct=S("TopicPartition", [F("topic", "string", "1+"), F("partitions", "[]int32", "1+")]),
        ),
        F("generationId", "int32", "2+", default=-1, ignorable=True),
        F("rackId", "string", "3+", nullable="3+", default="null", ignorable=True),
    ],
)

CONSUMER_PROTOCOL_ASSIGNMENT = Message(
    "ConsumerProtocolAssignment",
    parse_versions("0-3"),
    None,
    [
        F(
            "assignedPartitions",
            "[]struct",
            struct=S("TopicPartition", [F("topic", "string"), F("partitions", "[]int32")]),
        ),
        F("userData", "bytes", nullable="0+", default="null", zero_copy=True),
    ],
)

CONSUMER_PROTOCOL_TYPE = "consumer"


def record_schemas(record_type: int) -> tuple[Message, Message] | None:
    """(key message, value message) for a record type, None when unknown."""
    return RECORDS.get(record_type)
