"""Package version."""

VERSION = "1.5.0"