"""The live guard of the abort script: plain POSIX sh text, no I/O.

A disk copy is stale the moment it is taken. The script defines ``kf_guard`` once
(:func:`guard_functions`) and runs ``kf_guard ... || exit`` right before each armed abort
(:func:`guard_call`). ``kf_guard`` reads the partition's producer entry again and succeeds only when
the entry of the abort's producer id still holds the values the disk copy gave: ProducerEpoch,
LatestCoordinatorEpoch, CurrentTransactionStartOffset (what the abort's arguments are made of), and
LastSequence and LastTimestamp (any write or marker of that producer since the copy changes them).

Where it reads the entry:

* live, brokers >= 2.8 (DescribeProducers): ``kafka-transactions.sh describe-producers --topic T
  --partition P``, whose table Kafka's ``TransactionsCommand.DescribeProducersCommand`` prints (tab
  after every cell, cells padded with spaces, ``None`` for no open transaction); the tool is the one
  ``KAFKA_TRANSACTIONS`` names, else ``kafka-transactions.sh`` from PATH, else ``kafka-transactions``
  (Confluent Platform's name);
* offline, any broker (older ones have no live API): with ``KF_FRESH_COPY`` set to a fresh copy of the
  partition's directory (or of the log dir holding it), ``kafka-forensics describe-producers
  "$KF_FRESH_COPY" --topic T --partition P --format csv`` (same column names; empty for none).

Exit status of ``kf_guard``: 0 the values are equal (it says so on stdout); 3 they differ or the entry
is gone (one line on stderr: each differing value, disk vs live); 4 it could not check (the tool failed:
unreachable, unsupported API, unreadable copy; also one line on stderr). Values are shell-quoted
(:func:`shlex.quote`); the awk program reads them from the environment, never from its source text.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

FRESH_COPY_VAR = "KF_FRESH_COPY"
TOOL_VAR = "KAFKA_TRANSACTIONS"  # the kafka-transactions tool the guard runs: a path, or a name on PATH
TOOL_NAMES = ("kafka-transactions.sh", "kafka-transactions")  # Kafka's name, then Confluent Platform's
GUARD = "kf_guard"
EXIT_DIFFERS = 3
EXIT_UNCHECKED = 4
# describe-producers columns compared, with the row key holding the disk copy's value
GUARD_COLUMNS = (("ProducerEpoch", "producerEpoch"), ("LatestCoordinatorEpoch", "coordinatorEpoch"),
                 ("CurrentTransactionStartOffset", "startOffset"), ("LastSequence", "lastSequence"),
                 ("LastTimestamp", "lastTimestamp"))

_HEADER = f"""\
# ---- {GUARD}: the live check before each abort ------------------------------------------------
# A disk copy is stale the moment it is taken. Each armed abort below is preceded by
# "{GUARD} ... || exit": {GUARD} reads the partition's producer entry again and returns 0 only when,
# for the abort's ProducerId, ProducerEpoch, LatestCoordinatorEpoch, CurrentTransactionStartOffset,
# LastSequence and LastTimestamp all equal the values written on its line (the disk copy's).
# Otherwise it prints one line naming each value that differs (disk vs live) and returns
# {EXIT_DIFFERS}, or {EXIT_UNCHECKED} when it could not check; "|| exit" then stops the script: no later line runs.
# Where it reads the entry:
# - live, brokers >= 2.8 (they answer DescribeProducers):
#     kafka-transactions.sh --bootstrap-server B describe-producers --topic T --partition P
#   with the tool {TOOL_VAR} names (a path, or a name on PATH), else {TOOL_NAMES[0]}
#   from PATH, else {TOOL_NAMES[1]} (Confluent Platform's name); for example
#   {TOOL_VAR}=/opt/kafka/bin/kafka-transactions.sh sh <this script>. The abort lines
#   name {TOOL_NAMES[0]}: where it is not on PATH, put its bin dir on PATH first.
# - offline, for older brokers (no live API): copy the partition's directory afresh from the
#   broker that leads it (or that broker's whole log dir), run this script with
#   {FRESH_COPY_VAR}=<that copy>, and {GUARD} reads the copy with
#     kafka-forensics describe-producers "${FRESH_COPY_VAR}" --topic T --partition P --format csv
# To check by hand: run either command, find the row of the ProducerId on the {GUARD} line and
# compare those five columns with the values on that line (None / empty: no open transaction).
"""

# POSIX awk. Input: a describe-producers table (tab-separated, padded) or our CSV. Environment:
# KF_WANT "ProducerId=N Column=V ...", KF_CSV non-empty for CSV, KF_SRC the word for the fresh side.
# Prints one line; exit 0 equal, 3 differs or no entry, 4 no usable table.
_AWK = """\
function trim(s) { sub(/^[ \\t]+/, "", s); sub(/[ \\t\\r]+$/, "", s); return s }
BEGIN {
  FS = ENVIRON["KF_CSV"] != "" ? "," : "\\t"; src = ENVIRON["KF_SRC"]
  n = split(ENVIRON["KF_WANT"], pair, " ")
  for (i = 1; i <= n; i++) {
    eq = index(pair[i], "="); name[i] = substr(pair[i], 1, eq - 1); want[i] = substr(pair[i], eq + 1)
    if (eq < 2 || want[i] !~ /^(-?[0-9]+|None)$/) bad = "bad expected value " pair[i]
  }
  if (n < 2 || name[1] != "ProducerId") bad = "no ProducerId to look for"
}
!head && trim($1) == "ProducerId" { for (i = 1; i <= NF; i++) col[trim($i)] = i; head = 1; next }
head && trim($(col["ProducerId"])) == want[1] {
  rows++
  for (i = 2; i <= n; i++) { v = trim($(col[name[i]])); got[i] = (v == "") ? "None" : v }
}
END {
  if (bad != "") { print bad; exit 4 }
  if (!head) { print "no describe-producers table in the " src " answer"; exit 4 }
  for (i = 1; i <= n; i++) if (!(name[i] in col)) { print "no column " name[i] " in the " src " answer"; exit 4 }
  if (rows == 0) { print "no " src " entry for producer id " want[1] " (expired, or the partition changed)"; exit 3 }
  if (rows > 1) { print rows " " src " entries for producer id " want[1]; exit 4 }
  for (i = 2; i <= n; i++) {
    same = same (i > 2 ? ", " : "") name[i] " " got[i]
    if (got[i] != want[i]) diff = diff (diff != "" ? "; " : "") name[i] " disk " want[i] ", " src " " got[i]
  }
  if (diff != "") { print diff; exit 3 }
  print same; exit 0
}"""

_FUNCTION = f"""\
{GUARD}() {{
  kf_bs='' kf_cc='' kf_topic='' kf_part='' kf_pid='' kf_want=''
  while [ "$#" -gt 0 ]; do
    case $1 in
      --bootstrap-server) kf_bs=$2; shift 2 ;;
      --command-config) kf_cc=$2; shift 2 ;;
      --topic) kf_topic=$2; shift 2 ;;
      --partition) kf_part=$2; shift 2 ;;
      ProducerId=*) kf_pid=${{1#*=}}; kf_want="$kf_want $1"; shift ;;
      [A-Z]*=*) kf_want="$kf_want $1"; shift ;;
      *) printf '{GUARD}: REFUSED: unexpected argument %s. Nothing was aborted.\\n' "$1" >&2; return {EXIT_UNCHECKED} ;;
    esac
  done
  kf_what="$kf_topic-$kf_part producer $kf_pid"
  if [ -n "${{{FRESH_COPY_VAR}:-}}" ]; then
    kf_src='fresh copy' kf_csv=1
    if kf_out=$(kafka-forensics describe-producers "${FRESH_COPY_VAR}" --topic "$kf_topic" \\
        --partition "$kf_part" --format csv --no-progress); then :; else
      printf '{GUARD}: REFUSED %s: could not check: kafka-forensics describe-producers %s exited %s (its message is above). Nothing was aborted.\\n' \\
        "$kf_what" "${FRESH_COPY_VAR}" "$?" >&2
      return {EXIT_UNCHECKED}
    fi
  else
    kf_src='live' kf_csv='' kf_tool=${{{TOOL_VAR}:-}}
    if [ -z "$kf_tool" ]; then
      if command -v {TOOL_NAMES[0]} >/dev/null 2>&1 || ! command -v {TOOL_NAMES[1]} >/dev/null 2>&1; then
        kf_tool={TOOL_NAMES[0]}
      else
        kf_tool={TOOL_NAMES[1]}
      fi
    fi
    set -- --bootstrap-server "$kf_bs"
    if [ -n "$kf_cc" ]; then set -- "$@" --command-config "$kf_cc"; fi
    if kf_out=$("$kf_tool" "$@" describe-producers --topic "$kf_topic" --partition "$kf_part"); then :; else
      printf '{GUARD}: REFUSED %s: could not check: %s describe-producers exited %s (its message is above): broker unreachable, or older than 2.8 (no DescribeProducers)? For an older broker use the offline check: {FRESH_COPY_VAR}=<fresh copy of the partition dir> (see the top of this script). Nothing was aborted.\\n' \\
        "$kf_what" "$kf_tool" "$?" >&2
      return {EXIT_UNCHECKED}
    fi
  fi
  if kf_msg=$(printf '%s\\n' "$kf_out" | KF_WANT="$kf_want" KF_CSV="$kf_csv" KF_SRC="$kf_src" awk '
{_AWK}
'); then
    printf '{GUARD}: ok %s: %s %s equal the disk copy\\n' "$kf_what" "$kf_src" "$kf_msg"
    return 0
  else
    kf_rc=$?
  fi
  if [ "$kf_rc" -eq {EXIT_DIFFERS} ]; then
    printf '{GUARD}: REFUSED %s: the %s state differs from the disk copy: %s. Nothing was aborted; analyse a fresh copy.\\n' \\
      "$kf_what" "$kf_src" "$kf_msg" >&2
    return {EXIT_DIFFERS}
  fi
  printf '{GUARD}: REFUSED %s: could not check: %s. Nothing was aborted.\\n' "$kf_what" "$kf_msg" >&2
  return {EXIT_UNCHECKED}
}}
"""


def guard_functions() -> str:
    """The comment block and the ``kf_guard`` definition; the script includes it once."""
    return _HEADER + _FUNCTION


def guard_values(row: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(describe-producers column, the disk copy's value) pairs the guard compares; ProducerId first."""
    pairs = [("ProducerId", row["producerId"])] + [(col, row.get(key)) for col, key in GUARD_COLUMNS]
    return [(col, "None" if value is None else str(value)) for col, value in pairs]


def guard_call(row: Mapping[str, Any], bootstrap: str, command_config: str | None = None) -> str:
    """The line that runs ``kf_guard`` for one abort row and stops the script when it refuses."""
    args = [GUARD, "--bootstrap-server", bootstrap]
    if command_config:
        args += ["--command-config", command_config]
    args += ["--topic", str(row["topic"]), "--partition", str(row["partition"])]
    args += [f"{col}={value}" for col, value in guard_values(row)]
    return " ".join(shlex.quote(a) for a in args) + " || exit"
