"""Availability traces: per-client on intervals read safely from CSV, FedScale and FLASH files."""
