"""state layer: pure folds over decoded events (never opens a file).

* :mod:`forensics.state.producer`: a partition replica's producer state, with the broker's
  replication semantics (``ProducerAppendInfo``): nothing is rejected, every anomaly becomes a finding.
* :mod:`forensics.state.coordinator`: the transaction coordinator's metadata, folded from
  ``__transaction_state`` records as the coordinator loads a partition
  (``TransactionStateManager.loadTransactionMetadata``).
* :mod:`forensics.state.transitions`: the one table of valid previous transaction states.
* :mod:`forensics.state.cluster_image` / :mod:`forensics.state.cluster_replay`: the KRaft cluster image
  (brokers and their log dirs, topics, partitions with leader, ISR, epochs and directories, features),
  folded from ``__cluster_metadata`` records as Kafka's ``MetadataDelta`` replays them.
"""
