"""codec layer."""
