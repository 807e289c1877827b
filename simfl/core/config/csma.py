"""CSMA/CA on the uplink: the distributed coordination function (DCF) of IEEE 802.11.

The defaults are the IEEE 802.11 FHSS PHY's parameters as tabulated by Bianchi (JSAC
18(3), 2000, Table II): 50 us slots, SIFS 28 us, DIFS 128 us, 1 us propagation delay,
contention windows 32 to 1024 (W = 32, m = 5), a 272-bit MAC header, a 128-bit PHY
header, 112-bit ACK and CTS, 160-bit RTS and 1023-byte (8184-bit) MPDU payloads. The
channel bit rate is the uplink's (``phy_rate_bps`` null); Bianchi's table is these
defaults with ``phy_rate_bps = 1e6``. Convention: every frame (data, ACK, RTS, CTS)
carries the PHY header and is sent at ``phy_rate_bps``; the ACK, RTS and CTS sizes
exclude the PHY header; ``cw_min`` and ``cw_max`` are window sizes (a backoff is
uniform on 0 .. CW - 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from simfl.core.config.checks import at_most, non_negative, positive, require
from simfl.core.config.mac import MAX_SLOT_S, MAX_WINDOW, MIN_SLOT_S, Mac, MacCapabilities
from simfl.core.config.rate import FixedRate

if TYPE_CHECKING:
    from simfl.core.config.network import Network

#: largest MPDU payload (bytes): the 802.11ac MPDU limit
MAX_MPDU_BYTES = 11454
#: slowest PHY rate (bit/s)
MIN_RATE_BPS = 1.0
#: largest header or control frame (bits)
MAX_FRAME_BITS = 1_000_000
#: largest inter-frame space or propagation delay (seconds)
MAX_GAP_S = 1.0


@dataclass(frozen=True)
class CsmaCaMac(Mac):
    """IEEE 802.11 DCF: carrier sense, binary exponential backoff, ACKs, optional RTS/CTS.

    A client's update is split into MPDUs of ``mpdu_payload_bytes`` (the last one holds
    the rest); its upload is done when its last MPDU is acknowledged. A station with
    MPDUs left contends (it is saturated): it draws a backoff uniform on 0 .. CW - 1
    slots, counts it down in idle slots of ``slot_s`` only (frozen while the medium is
    busy, resumed after DIFS) and transmits when it reaches 0. A slot with exactly one
    transmitter is a success (basic access: DATA, SIFS, ACK; with ``rts_cts``: RTS,
    SIFS, CTS, SIFS, DATA, SIFS, ACK), with two or more a collision (no capture). CW
    starts at ``cw_min`` for each MPDU and doubles with each collision up to ``cw_max``;
    an MPDU that collides ``retry_limit`` times (null: never dropped; then ``cw_max`` must
    be at least 2, else two stations collide forever) is dropped, and
    with it the update: the client's upload fails (reason ``collided``), its other
    MPDUs are never sent, and it stops contending. Each busy period lasts Bianchi's
    T_s or T_c (with one ``propagation_delay_s`` after each frame exchange and DIFS
    after it). A station that finds the medium idle and no other station contending
    senses it for DIFS, then backs off like the others (saturated stations always back
    off). With ``carrier_sense_range_m`` null every station hears every other; set (it
    needs ``population.placement``), station i senses station j's frames only when they
    are at most that far apart, so hidden terminals appear: a station that does not
    sense a frame keeps counting down and may send into it, and frames that overlap at
    the access point are all lost (no capture). The access point's answers (ACK, and
    with ``rts_cts`` the CTS that reserves the medium to the end of the exchange) are
    heard by every station. The uplink channel only gives the rate (``phy_rate_bps``
    null): MPDUs are lost to collisions alone.
    Energy: a contending station draws ``tx_w`` while it transmits, ``rx_w`` while it
    receives or overhears, ``idle_w`` in idle slots and DIFS.
    """

    kind = "csma_ca"
    paper = ("Bianchi, Performance analysis of the IEEE 802.11 distributed coordination "
             "function, IEEE JSAC 18(3), 2000")
    capabilities = MacCapabilities(needs_positions=("carrier_sense_range_m",))
    slot_s: float = 50e-6
    sifs_s: float = 28e-6
    difs_s: float = 128e-6
    propagation_delay_s: float = 1e-6
    cw_min: int = 32
    cw_max: int = 1024
    retry_limit: int | None = 7
    rts_cts: bool = False
    mpdu_payload_bytes: int = 1023
    phy_rate_bps: float | None = None
    mac_header_bits: int = 272
    phy_header_bits: int = 128
    ack_bits: int = 112
    rts_bits: int = 160
    cts_bits: int = 112
    carrier_sense_range_m: float | None = None

    def check_in(self, network: Network) -> None:
        """Without ``phy_rate_bps`` the frames go at the uplink's rate: it must be fixed
        and finite (and no radio may set it instead)."""
        if self.phy_rate_bps is None:
            rate = network.uplink.rate
            require(isinstance(rate, FixedRate) and math.isfinite(rate.rate_bps)
                    and network.radio is None, "mac.phy_rate_bps", None,
                    "a bit rate when the uplink has no finite fixed rate (csma_ca sends its "
                    "frames at phy_rate_bps, or at the uplink's fixed rate when null)")

    def validate(self) -> None:
        require(MIN_SLOT_S <= self.slot_s <= MAX_SLOT_S, "slot_s", self.slot_s,
                f"a slot length in [{MIN_SLOT_S:g}, {MAX_SLOT_S:g}] seconds")
        for name in ("sifs_s", "difs_s", "propagation_delay_s"):
            value = getattr(self, name)
            require(0 <= value <= MAX_GAP_S, name, value, f"seconds in [0, {MAX_GAP_S:g}]")
        positive(self, "cw_min", "retry_limit", "mpdu_payload_bytes")
        if self.phy_rate_bps is not None:
            require(MIN_RATE_BPS <= self.phy_rate_bps < math.inf, "phy_rate_bps",
                    self.phy_rate_bps, f"null or a finite bit rate >= {MIN_RATE_BPS:g} bit/s")
        require(self.cw_min <= self.cw_max <= MAX_WINDOW, "cw_max", self.cw_max,
                f"an integer in [cw_min = {self.cw_min}, {MAX_WINDOW}]")
        # a window of one slot and no retry limit: two contenders draw backoff 0 at every
        # attempt, collide at every attempt, and the round never ends (a livelock)
        require(self.cw_max > 1 or self.retry_limit is not None, "cw_max", self.cw_max,
                "a window of at least 2 slots when retry_limit is null (with cw_max = 1 "
                "two contending stations collide forever)")
        require(self.mpdu_payload_bytes <= MAX_MPDU_BYTES, "mpdu_payload_bytes",
                self.mpdu_payload_bytes, f"an integer in [1, {MAX_MPDU_BYTES}] bytes")
        frames = ("mac_header_bits", "phy_header_bits", "ack_bits", "rts_bits", "cts_bits")
        non_negative(self, *frames)
        at_most(self, MAX_FRAME_BITS, *frames, why="bits of a header or control frame")
        if self.carrier_sense_range_m is not None:
            require(0 < self.carrier_sense_range_m < math.inf, "carrier_sense_range_m",
                    self.carrier_sense_range_m, "null (every station hears every other) or "
                    "a finite distance > 0 metres")
