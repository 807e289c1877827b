"""How long the frames and busy periods of IEEE 802.11 DCF last (Bianchi's T_s and T_c).

Every frame carries the PHY header and is sent at the channel's bit rate; a frame
exchange ends one propagation delay after its last frame, and DIFS follows it before
the idle slots resume. With payload P seconds, header H (MAC + PHY), delay d:

- basic access: T_s = H + P + SIFS + d + ACK + DIFS + d, T_c = H + P* + DIFS + d
- RTS/CTS: T_s = RTS + SIFS + d + CTS + SIFS + d + H + P + SIFS + d + ACK + DIFS + d,
  T_c = RTS + DIFS + d

(P* the longest payload among the colliding frames). ``busy_s`` is the part before
DIFS: the medium is occupied (a success's ACK has arrived when it ends).
"""

from __future__ import annotations

from dataclasses import dataclass

from simfl.core.config.csma import CsmaCaMac


@dataclass(frozen=True)
class DcfTiming:
    """Frame and gap durations (seconds) of one DCF configuration at ``rate_bps``."""

    slot_s: float
    sifs_s: float
    difs_s: float
    delay_s: float
    header_s: float  # MAC + PHY header of a data frame
    ack_s: float
    rts_s: float
    cts_s: float
    rate_bps: float
    rts_cts: bool

    @classmethod
    def of(cls, cfg: CsmaCaMac, rate_bps: float) -> "DcfTiming":
        """The durations of ``cfg`` at ``rate_bps`` (every frame with its PHY header)."""
        phy = cfg.phy_header_bits
        return cls(slot_s=cfg.slot_s, sifs_s=cfg.sifs_s, difs_s=cfg.difs_s,
                   delay_s=cfg.propagation_delay_s,
                   header_s=(cfg.mac_header_bits + phy) / rate_bps,
                   ack_s=(cfg.ack_bits + phy) / rate_bps, rts_s=(cfg.rts_bits + phy) / rate_bps,
                   cts_s=(cfg.cts_bits + phy) / rate_bps, rate_bps=rate_bps,
                   rts_cts=cfg.rts_cts)

    def payload_s(self, payload_bits: float) -> float:
        return payload_bits / self.rate_bps

    def success_busy_s(self, payload_bits: float) -> float:
        """T_s - DIFS: from the first frame's start to the ACK's arrival."""
        data_s = self.header_s + self.payload_s(payload_bits) + self.sifs_s + self.delay_s \
            + self.ack_s + self.delay_s
        if self.rts_cts:
            return self.rts_s + self.sifs_s + self.delay_s + self.cts_s + self.sifs_s \
                + self.delay_s + data_s
        return data_s

    def collision_busy_s(self, longest_payload_bits: float) -> float:
        """T_c - DIFS: the colliding frames (the longest of them) and one delay."""
        if self.rts_cts:
            return self.rts_s + self.delay_s
        return self.header_s + self.payload_s(longest_payload_bits) + self.delay_s

    def sent_s(self, payload_bits: float) -> float:
        """Seconds a transmitter's radio sends in its exchange: DATA (with RTS/CTS: RTS
        and DATA); the ACK and CTS it receives."""
        data_s = self.header_s + self.payload_s(payload_bits)
        return self.rts_s + data_s if self.rts_cts else data_s

    def collided_sent_s(self, payload_bits: float) -> float:
        """Seconds a transmitter's radio sends in a collision: its DATA, or its RTS."""
        return self.rts_s if self.rts_cts else self.header_s + self.payload_s(payload_bits)
