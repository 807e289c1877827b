"""The downlink band of each access point, shared by the unicast downloads of its cell.

Under ``ofdma`` with ``downlink = "shared"`` a round's downloads join their access point's
downlink band as uploads join the uplink's (:mod:`simfl.sim.mac.ofdma`: processor sharing
on the clock, rates changed at every start and finish). The split is equal among the
cell's active downloads (whole blocks with ``resource_blocks``). The access point spreads
its power over the band with the shares, so the SNR per hertz does not depend on the
share: a download on a fraction f of the band runs at f times its link's full-band rate
(its attempt's bits over its airtime), and n downloads that start together, each taking
T_k alone, all end by sum T_k.
"""

from __future__ import annotations

from simfl.core.config.network import OfdmaMac
from simfl.sim.mac.band_split import BandSplit
from simfl.sim.radio.radio_map import RadioMap


class DownlinkSplit(BandSplit):
    """Equal shares of each cell's downlink band, at rates linear in the share.

    ``radio`` gives only the cells (each client's serving access point, read when it
    joins: mobility may move it); without one there is a single cell."""

    def __init__(self, cfg: OfdmaMac, radio: RadioMap | None, n_clients: int) -> None:
        super().__init__(cfg, None, n_clients)  # no radio: rates are share x link rate
        self.cells = radio

    def cell(self, client: int) -> int:
        return 0 if self.cells is None else int(self.cells.ap[client])
