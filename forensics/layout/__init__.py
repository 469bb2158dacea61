"""layout layer."""
