"""SimPy processes: devices, availability, channels and the synchronous server."""

from simfl.sim import scripted  # noqa: F401  (adds the scripted kinds to the builders)
