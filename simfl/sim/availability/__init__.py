"""Availability: which registered clients are online, per round or in continuous time, and sessions."""
