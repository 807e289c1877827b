"""Named random streams derived from one root seed.

Every stochastic component draws from its own stream, named like a path
(``"channel/uplink/17/round/3"``). A stream's numbers depend only on the root seed and
its name, so adding a component never shifts another's numbers and what-if
comparisons of two scenarios share random numbers wherever their components agree.
No global random state is used anywhere in simfl.
"""

from __future__ import annotations

import hashlib

import numpy as np


def _spawn_key(name: str) -> tuple[int, ...]:
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=16).digest()
    return tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))


class RngTree:
    """A root seed and the streams named below it."""

    def __init__(self, seed: int) -> None:
        self.seed = int(seed)

    def seed_sequence(self, name: str) -> np.random.SeedSequence:
        return np.random.SeedSequence(self.seed, spawn_key=_spawn_key(name))

    def stream(self, name: str) -> np.random.Generator:
        """A fresh generator for ``name``; the same name always gives the same numbers."""
        return np.random.Generator(np.random.PCG64(self.seed_sequence(name)))

    def int_seed(self, name: str) -> int:
        """A 63-bit integer seed for ``name`` (for torch generators)."""
        return int(self.seed_sequence(name).generate_state(1, np.uint64)[0] >> np.uint64(1))
