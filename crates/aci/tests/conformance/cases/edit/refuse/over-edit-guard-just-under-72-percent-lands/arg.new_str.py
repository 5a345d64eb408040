# Limits.
