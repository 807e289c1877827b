"""The NR modulation and coding schemes of 3GPP TS 38.214 table 5.1.3.1-1 (64QAM).

MCS index table 1 of the data channels (PDSCH, and PUSCH without transform precoding):
for each index 0-28, the modulation order Q_m (bits per symbol: 2 QPSK, 4 16QAM,
6 64QAM) and the target code rate R x 1024. The spectral efficiency Q_m R (bits per
resource element) is the rate per hertz of the link model, computed here from the two
columns rather than copied (the standard's own column is that product rounded to four
decimals). Indices 29-31 are reserved for retransmissions and carry no rate.
"""

from __future__ import annotations

from typing import NamedTuple


class Mcs(NamedTuple):
    """One row of the table: modulation order and target code rate x 1024."""

    modulation_order: int
    code_rate_x1024: int

    @property
    def spectral_efficiency(self) -> float:
        """Bits per resource element (per second per hertz): Q_m R / 1024."""
        return self.modulation_order * self.code_rate_x1024 / 1024.0


#: TS 38.214 table 5.1.3.1-1, MCS 0-28, in index order
MCS_TABLE_1: tuple[Mcs, ...] = (
    Mcs(2, 120), Mcs(2, 157), Mcs(2, 193), Mcs(2, 251), Mcs(2, 308), Mcs(2, 379),
    Mcs(2, 449), Mcs(2, 526), Mcs(2, 602), Mcs(2, 679),
    Mcs(4, 340), Mcs(4, 378), Mcs(4, 434), Mcs(4, 490), Mcs(4, 553), Mcs(4, 616),
    Mcs(4, 658),
    Mcs(6, 438), Mcs(6, 466), Mcs(6, 517), Mcs(6, 567), Mcs(6, 616), Mcs(6, 666),
    Mcs(6, 719), Mcs(6, 772), Mcs(6, 822), Mcs(6, 873), Mcs(6, 910), Mcs(6, 948),
)


def spectral_efficiency(mcs: int) -> float:
    """Bits per second per hertz of MCS index ``mcs`` (0-28)."""
    return MCS_TABLE_1[mcs].spectral_efficiency
