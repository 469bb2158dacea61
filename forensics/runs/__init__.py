"""The application layer: one function per use case (scan, find-hanging, abort-commands, report,
describe-producers, list, describe, export, dump, verify-manifest).

Each takes a typed request (what to read, filters, as-of, engine, manifest wish) and a
:class:`~forensics.runs.context.Listener` (what it tells as it goes: notes, warnings, progress) and
returns a typed result (rows, the as-of and its source, findings, the manifest written, engine
statistics). This is the only code that discovers the inputs, plans, runs an executor, reads for a
preview and calls the analysis; the command line parses options, calls one run and renders its
result.
"""
