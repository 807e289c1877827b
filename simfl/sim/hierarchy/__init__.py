"""Hierarchical client-edge-cloud rounds: edge servers per access point and their backhaul."""
