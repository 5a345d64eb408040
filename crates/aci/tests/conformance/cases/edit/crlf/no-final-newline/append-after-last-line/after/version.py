"""Package version."""

VERSION = "1.4.2"
RELEASED = "2024-05-01"