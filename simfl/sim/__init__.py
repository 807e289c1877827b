"""SimPy processes: devices, availability, channels and the synchronous server."""
