"""A round's device work: devices, the fast and clocked loops, cohort contention and async steps."""
