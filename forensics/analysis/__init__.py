"""analysis layer: pure cross-references of the rebuilt state (verdicts, clock, replicas, broker version);
never opens a file, never prints."""
