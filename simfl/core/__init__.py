"""Types, configuration, registries, random streams and records (no simpy, no torch)."""
