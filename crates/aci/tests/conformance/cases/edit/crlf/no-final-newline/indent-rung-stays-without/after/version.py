"""Package version."""

VERSION = "2.0.0"