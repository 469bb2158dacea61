"""kafka-forensics: offline forensics for Apache Kafka broker disks."""

# The version, written here only: pyproject.toml takes it from here (dynamic = ["version"]), so the
# installed package's metadata says the same; --version prints it without reading that metadata
# (importlib.metadata costs more than the whole of --version otherwise does).
__version__ = "0.1.0"
