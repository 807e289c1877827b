"""Backoff draws, uniform on 0 .. window - 1: numpy's numbers, a block of raw words at a time.

A backoff is ``rng.integers(0, window)``. One such call costs more than the rest of a
station's turn in the DCF, so :class:`Backoffs` takes the generator's 32-bit words a
block at a time (``integers(0, 2**32, size, dtype=uint32)``, the same words in the same
order as single draws take them) and maps each to a backoff as numpy does for a window
up to 2**32: Lemire's multiply-and-shift, a word ``u`` giving ``(u * window) >> 32``,
with numpy's rejection of the few words whose low half falls below
``(2**32 - window) % window`` (the next word is taken instead), and no word taken for a
window of 1. The draws are therefore those of one ``integers`` call per backoff
(``tests/test_csma_backoff.py`` checks it against numpy); only the generator's state
after the round differs (a block is taken ahead), and the stream serves nothing else.
A generator that is not numpy's (a test's script of draws) is called once per draw.
"""

from __future__ import annotations

from typing import Protocol, SupportsInt

import numpy as np

_WORD = 1 << 32
_LOW = _WORD - 1
#: 32-bit words taken from the generator at a time
BLOCK = 4096


def contention_windows(cw_min: int, cw_max: int, collisions: int = 41) -> list[int]:
    """The contention window after r collisions of an MPDU, r = 0 .. ``collisions`` - 1:
    ``cw_min`` doubled r times, at most ``cw_max``."""
    return [min(cw_min * 2 ** r, cw_max) for r in range(collisions)]


class Draws(Protocol):
    """What the DCF needs of a generator: ``integers(low, high)``."""

    def integers(self, low: int, high: int) -> SupportsInt: ...


class Backoffs:
    """Backoffs drawn from ``rng`` in the order of the calls."""

    def __init__(self, rng: Draws) -> None:
        self.rng = rng
        self._words: list[int] = []
        self._next = 0
        self._block = isinstance(rng, np.random.Generator)

    def draw(self, window: int) -> int:
        """A backoff uniform on 0 .. ``window`` - 1 (``window`` in 1 .. 2**32)."""
        if not self._block:
            return int(self.rng.integers(0, window))
        if window == 1:
            return 0
        product = self._word() * window
        if product & _LOW < window:  # maybe in the biased band: numpy's rejection test
            threshold = (_WORD - window) % window
            while product & _LOW < threshold:
                product = self._word() * window
        return product >> 32

    def _word(self) -> int:
        if self._next == len(self._words):
            assert isinstance(self.rng, np.random.Generator)
            self._words = self.rng.integers(0, _WORD, size=BLOCK, dtype=np.uint32).tolist()
            self._next = 0
        word = self._words[self._next]
        self._next += 1
        return word
