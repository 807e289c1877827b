"""Uniform numbers addressed by (key, client, index): counter-based, vectorised draws.

A mover that needs the k-th draw of client i at some refresh gets it without keeping a
generator per client and without depending on which other draws were made before: the
number is a hash (SplitMix64's finaliser, applied in turn to the key, the client, the
index and the slot) of the four, scaled to [0, 1). The key comes from a named stream of
the run's :class:`~simfl.core.rng.RngTree`, so it depends on the seed and the name only.
"""

from __future__ import annotations

import numpy as np

from simfl.core.rng import RngTree

_MASK = (1 << 64) - 1
_GOLDEN_INT, _M1_INT, _M2_INT = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB
_GOLDEN = np.uint64(_GOLDEN_INT)
_M1, _M2 = np.uint64(_M1_INT), np.uint64(_M2_INT)


def _mix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser (a bijection of 64-bit integers with good avalanche)."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return np.asarray(z ^ (z >> np.uint64(31)))


def _mix_int(z: int) -> int:
    """:func:`_mix` on one Python integer (no array overhead for a single draw)."""
    z = ((z ^ (z >> 30)) * _M1_INT) & _MASK
    z = ((z ^ (z >> 27)) * _M2_INT) & _MASK
    return z ^ (z >> 31)


class KeyedUniforms:
    """``draw(clients, index, n)``: n uniforms in [0, 1) for each of ``clients``' index-th
    draw, shape (n, len(clients)); the same arguments always give the same numbers."""

    def __init__(self, rngs: RngTree, name: str) -> None:
        self.key = rngs.seed_sequence(name).generate_state(1, np.uint64)[0]
        self._key_int = int(self.key)

    def draw_one(self, client: int, index: int, n: int) -> list[float]:
        """The same numbers as ``draw`` for one client and index (a list of n floats)."""
        h = _mix_int((self._key_int + (client + 1) * _GOLDEN_INT) & _MASK)
        h = _mix_int((h + (index + 1) * _GOLDEN_INT) & _MASK)
        return [(_mix_int((h + j * _GOLDEN_INT) & _MASK) >> 11) * (1.0 / (1 << 53))
                for j in range(1, n + 1)]

    def draw(self, clients: np.ndarray, index: np.ndarray, n: int) -> np.ndarray:
        with np.errstate(over="ignore"):
            h = _mix(self.key + (np.asarray(clients, dtype=np.uint64) + np.uint64(1)) * _GOLDEN)
            h = _mix(h + (np.asarray(index, dtype=np.uint64) + np.uint64(1)) * _GOLDEN)
            slots = np.arange(1, n + 1, dtype=np.uint64)[:, None] * _GOLDEN
            bits = _mix(h[None, :] + slots) >> np.uint64(11)
        return np.asarray(bits.astype(np.float64) * (1.0 / (1 << 53)))
