"""The ``__cluster_metadata`` record schemas: a declarative table, one entry per record type.

From ``metadata/src/main/resources/common/metadata/*.json`` (the apiKey is the record type id), read
and rendered by :mod:`forensics.codec.schema`; :mod:`forensics.codec.metadata_records` decodes with
them.
"""

from __future__ import annotations


from forensics.codec.schema import F, Message, S, parse_versions

def _m(api_key: int, name: str, valid: str, fields, common=()) -> Message:
    return Message(name, parse_versions(valid), parse_versions("0+"), list(fields), api_key=api_key, common=common)


def _endpoint_struct(name: str):
    return S(
        name,
        [F("name", "string"), F("host", "string"), F("port", "uint16"), F("securityProtocol", "int16")],
    )


def _feature_struct(name: str):
    return S(name, [F("name", "string"), F("minSupportedVersion", "int16"), F("maxSupportedVersion", "int16")])


_METADATA_LIST = [
    _m(0, "RegisterBrokerRecord", "0-3", [
        F("brokerId", "int32"),
        F("isMigratingZkBroker", "bool", "2+", default="false"),
        F("incarnationId", "uuid"),
        F("brokerEpoch", "int64"),
        F("endPoints", "[]struct", struct=_endpoint_struct("BrokerEndpoint")),
        F("features", "[]struct", struct=_feature_struct("BrokerFeature")),
        F("rack", "string", nullable="0+"),
        F("fenced", "bool", default="true"),
        F("inControlledShutdown", "bool", "1+", default="false"),
        F("logDirs", "[]uuid", "3+", tagged="3+", tag=0),
    ]),
    _m(1, "UnregisterBrokerRecord", "0", [F("brokerId", "int32"), F("brokerEpoch", "int64")]),
    _m(2, "TopicRecord", "0", [F("name", "string"), F("topicId", "uuid")]),
    _m(3, "PartitionRecord", "0-2", [
        F("partitionId", "int32", default="-1"),
        F("topicId", "uuid"),
        F("replicas", "[]int32"),
        F("isr", "[]int32"),
        F("removingReplicas", "[]int32"),
        F("addingReplicas", "[]int32"),
        F("leader", "int32", default="-1"),
        F("leaderRecoveryState", "int8", default="0", tagged="0+", tag=0),
        F("leaderEpoch", "int32", default="-1"),
        F("partitionEpoch", "int32", default="-1"),
        F("directories", "[]uuid", "1+"),
        F("eligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tagged="2+", tag=1, default="null"),
        F("lastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=2, default="null"),
    ]),
    _m(4, "ConfigRecord", "0", [
        F("resourceType", "int8"),
        F("resourceName", "string"),
        F("name", "string"),
        F("value", "string", nullable="0+"),
    ]),
    _m(5, "PartitionChangeRecord", "0-2", [
        F("partitionId", "int32", default="-1"),
        F("topicId", "uuid"),
        F("isr", "[]int32", nullable="0+", tagged="0+", tag=0, default="null"),
        F("leader", "int32", tagged="0+", tag=1, default="-2"),
        F("replicas", "[]int32", nullable="0+", tagged="0+", tag=2, default="null"),
        F("removingReplicas", "[]int32", nullable="0+", tagged="0+", tag=3, default="null"),
        F("addingReplicas", "[]int32", nullable="0+", tagged="0+", tag=4, default="null"),
        F("leaderRecoveryState", "int8", tagged="0+", tag=5, default="-1"),
        F("directories", "[]uuid", "1+", nullable="1+", tagged="1+", tag=8, default="null"),
        F("eligibleLeaderReplicas", "[]int32", "2+", nullable="2+", tagged="2+", tag=6, default="null"),
        F("lastKnownElr", "[]int32", "2+", nullable="2+", tagged="2+", tag=7, default="null"),
    ]),
    _m(7, "FenceBrokerRecord", "0", [F("id", "int32"), F("epoch", "int64")]),
    _m(8, "UnfenceBrokerRecord", "0", [F("id", "int32"), F("epoch", "int64")]),
    _m(9, "RemoveTopicRecord", "0", [F("topicId", "uuid")]),
    _m(10, "DelegationTokenRecord", "0", [
        F("owner", "string"),
        F("requester", "string"),
        F("renewers", "[]string"),
        F("issueTimestamp", "int64"),
        F("maxTimestamp", "int64"),
        F("expirationTimestamp", "int64"),
        F("tokenId", "string"),
    ]),
    _m(11, "UserScramCredentialRecord", "0", [
        F("name", "string"),
        F("mechanism", "int8"),
        F("salt", "bytes"),
        F("storedKey", "bytes"),
        F("serverKey", "bytes"),
        F("iterations", "int32"),
    ]),
    _m(12, "FeatureLevelRecord", "0", [F("name", "string"), F("featureLevel", "int16")]),
    _m(14, "ClientQuotaRecord", "0", [
        F("entity", "[]struct", struct=S("EntityData", [
            F("entityType", "string"),
            F("entityName", "string", nullable="0+"),
        ])),
        F("key", "string"),
        F("value", "float64"),
        F("remove", "bool"),
    ]),
    _m(15, "ProducerIdsRecord", "0", [
        F("brokerId", "int32"),
        F("brokerEpoch", "int64", default="-1"),
        F("nextProducerId", "int64"),
    ]),
    _m(17, "BrokerRegistrationChangeRecord", "0-2", [
        F("brokerId", "int32"),
        F("brokerEpoch", "int64"),
        F("fenced", "int8", tagged="0+", tag=0),
        F("inControlledShutdown", "int8", "1+", tagged="1+", tag=1),
        F("logDirs", "[]uuid", "2+", tagged="2+", tag=2),
    ]),
    _m(18, "AccessControlEntryRecord", "0", [
        F("id", "uuid"),
        F("resourceType", "int8"),
        F("resourceName", "string"),
        F("patternType", "int8"),
        F("principal", "string"),
        F("host", "string"),
        F("operation", "int8"),
        F("permissionType", "int8"),
    ]),
    _m(19, "RemoveAccessControlEntryRecord", "0", [F("id", "uuid")]),
    _m(20, "NoOpRecord", "0", []),
    _m(21, "ZkMigrationStateRecord", "0", [F("zkMigrationState", "int8")]),
    _m(22, "RemoveUserScramCredentialRecord", "0", [F("name", "string"), F("mechanism", "int8")]),
    _m(23, "BeginTransactionRecord", "0", [
        F("name", "string", nullable="0+", tagged="0+", tag=0, default="null"),
    ]),
    _m(24, "EndTransactionRecord", "0", []),
    _m(25, "AbortTransactionRecord", "0", [
        F("reason", "string", nullable="0+", tagged="0+", tag=0, default="null"),
    ]),
    _m(26, "RemoveDelegationTokenRecord", "0", [F("tokenId", "string")]),
    _m(27, "RegisterControllerRecord", "0", [
        F("controllerId", "int32"),
        F("incarnationId", "uuid"),
        F("zkMigrationReady", "bool"),
        F("endPoints", "[]struct", struct=_endpoint_struct("ControllerEndpoint")),
        F("features", "[]struct", struct=_feature_struct("ControllerFeature")),
    ]),
    # Not in the 2024-10 trunk; layout reconstructed from a Kafka 4.1 log (a plain
    # compact string then the tag section). Nullability is an assumption (not nullable).
    _m(28, "ClearElrRecord", "0", [F("topicName", "string")]),
]


def _snake_upper(name: str) -> str:
    """``MessageGenerator.toSnakeCase(name).toUpperCase()``."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0:
            out.append("_")
        out.append(ch.upper())
    return "".join(out)


METADATA_MESSAGES: dict[int, Message] = {m.api_key: m for m in _METADATA_LIST}
METADATA_RECORD_TYPES: dict[int, str] = {k: _snake_upper(m.name) for k, m in METADATA_MESSAGES.items()}
