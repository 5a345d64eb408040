"""Package version."""

VERSION = "1.4.2"