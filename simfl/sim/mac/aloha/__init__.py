"""Slotted ALOHA: contention per event or per cohort, its slots, queue, tally and data phase."""
