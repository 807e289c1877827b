"""An NR link on the shared radio: MCS link adaptation, block errors and HARQ.

The ``nr`` kind of ``network.radio.link``. An attempt of client i at time t is one
block (the update, or the model) sent as follows.

1. **Rate.** The transmitter knows the client's mean SINR (the radio map's: path loss,
   shadowing, power), not the fade the attempt will meet: like the ``shannon`` link in
   outage, it learns the fade only from the result. It picks the highest MCS m of TS
   38.214 table 5.1.3.1-1 whose BLER at the mean SINR is at most ``target_bler``
   (:func:`simfl.sim.radio.bler.pick_mcs`; MCS 0 when none is) and sends at
   R = (1 - overhead) x SE_m x bandwidth, so one transmission lasts bits / R.
2. **Block errors and HARQ.** Transmission k (1, 2, ...) starts at t + (k - 1) bits / R
   (retransmissions follow back to back, the feedback delay is not modelled) and meets
   the SINR mean_snr x g(t_k), g the fading gain (:mod:`simfl.sim.radio.fading`). The
   receiver keeps every copy and adds them (chase combining): after k transmissions the
   combined SINR is the sum of their linear SINRs, and decoding fails with the BLER of
   MCS m at that sum, each decoding drawn independently. The block arrives at the first
   success, after k bits / R; after ``max_harq`` failures it is lost after
   max_harq bits / R, and the ARQ above (``network.arq_max_attempts``) sends it again.
   The residual loss of a block is therefore the product of the BLERs at the combined
   SINRs of its transmissions.
3. **Draws.** The decoding draws are uniforms addressed by (client, count) under the
   stream ``radio/harq/<direction>`` (:mod:`simfl.sim.radio.keyed`); the count is the
   client's number of decodings so far, rebuilt by the replay of a resumed run.

``network.sinr_threshold_db`` does not act on this link (the MCS and the BLER replace the
outage rule); it still serves the capture of slotted ALOHA. A client silenced by power
control loses its attempts at once, as on the ``shannon`` link.
"""

from __future__ import annotations

import math

import numpy as np

from simfl.core.config.network import Channel
from simfl.core.config.radio_link import NrLink
from simfl.core.rng import RngTree
from simfl.sim.links.channel import Delivery
from simfl.sim.radio.bler import bler_of_linear, pick_mcs
from simfl.sim.radio.keyed import KeyedUniforms
from simfl.sim.radio.link import FadingGains, RadioLink
from simfl.sim.radio.mcs import spectral_efficiency
from simfl.sim.radio.radio_map import RadioMap


class NrRadioLink(RadioLink):
    """One direction of the shared radio as an NR link (module docstring).

    Parameters
    ----------
    model:
        The ``nr`` settings: target BLER, HARQ transmissions, overhead.
    channel, radio_map, direction, fading, sinr_threshold_db:
        As for :class:`~simfl.sim.radio.link.RadioLink` (the threshold is kept but unused).
    rngs:
        The run's random streams (the decoding draws).
    """

    def __init__(self, model: NrLink, channel: Channel, radio_map: RadioMap, direction: str,
                 fading: FadingGains | None = None, sinr_threshold_db: float | None = None,
                 rngs: RngTree | None = None) -> None:
        super().__init__(channel, radio_map, direction, fading, sinr_threshold_db, rngs)
        if rngs is None:
            raise ValueError("an NR link needs rngs for its decoding draws")
        self.model = model
        self.uniforms = KeyedUniforms(rngs, f"radio/harq/{direction}")
        self.decodings: dict[int, int] = {}  # per client: decoding draws made so far

    def mcs(self, client: int) -> int:
        """The MCS ``client`` sends at: the highest within the target BLER at its mean SNR."""
        mean = self.mean_snr(client)
        if mean <= 0.0:
            return 0
        return pick_mcs(10.0 * math.log10(mean), self.model.target_bler)

    def mcs_rate_bps(self, mcs: int) -> float:
        """The bit rate of ``mcs`` over the whole band, overhead taken off."""
        return ((1.0 - self.model.overhead) * spectral_efficiency(mcs)
                * self.radio_map.bandwidth_hz)

    def mean_rate_bps(self, client: int) -> float:
        """The rate of ``client``'s MCS over the whole band (what a policy plans with)."""
        return self.mcs_rate_bps(self.mcs(client))

    def transmit(self, t_s: float, n_bytes: int, rng: np.random.Generator | None, *,
                 client: int = -1) -> Delivery:
        """One block of ``client`` from ``t_s``: its HARQ transmissions, whether it arrives
        and its airtime (``rng`` is unused: the draws are the link's own)."""
        mean = self.mean_snr(client)
        if mean <= 0.0:  # silenced by power control
            return Delivery(ok=False, airtime_s=0.0)
        mcs = self.mcs(client)
        one_s = n_bytes * 8.0 / self.mcs_rate_bps(mcs)
        combined = 0.0
        for k in range(self.model.max_harq):
            combined += mean * self.fading.gain(client, t_s + k * one_s)
            if self._uniform(client) >= bler_of_linear(mcs, combined):
                return Delivery(ok=True, airtime_s=(k + 1) * one_s)
        return Delivery(ok=False, airtime_s=self.model.max_harq * one_s)

    def _uniform(self, client: int) -> float:
        """The client's next decoding draw, uniform in [0, 1)."""
        index = self.decodings.get(client, 0)
        self.decodings[client] = index + 1
        return self.uniforms.draw_one(client, index, 1)[0]
