"""Mean path gains from geometry: path loss, shadowing, association and power control.

The mean received power of client i at access point a is ``P_i - PL(d_ia) - X_ia`` (dBm),
with X_ia ~ N(0, shadowing_db^2) drawn once per client and access point from the stream
``radio/shadowing/<a>`` (client i's value is the i-th draw, whatever the other access
points). With ``shadowing_corr_m`` > 0 the shadowing toward each access point is a
Gaussian field whose correlation between points (dx, dy) apart is
``exp(-(|dx| + |dy|) / shadowing_corr_m)``: separable exponential (Gudmundson's model
along each axis), built on a lattice of spacing ``shadowing_corr_m / LATTICE_STEPS`` by
first-order autoregression along x then y, each client taking its nearest lattice point.
A client is served by the nearest access point or the strongest (highest mean received
power); power control then sets its transmit power toward that access point.
"""

from __future__ import annotations

import math

import numpy as np

from simfl.core.config.placement import Placement
from simfl.core.config.cells import Cells, sector_gain_db
from simfl.core.config.radio import PathLoss, Radio
from simfl.core.config.tr38901 import Tr38901
from simfl.core.errors import ConfigError
from simfl.core.registry import implementation_of, implements
from simfl.core.rng import RngTree
from simfl.sim.radio import power_control  # noqa: F401  (names the power-control kinds)
from simfl.sim.radio.placement import place
from simfl.sim.radio.radio_map import RadioMap

#: lattice points per correlation distance (correlated shadowing)
LATTICE_STEPS = 8
#: most lattice points of one access point's shadowing field (memory: float64 each)
MAX_LATTICE_POINTS = 16_000_000


class Propagation:
    """Mean path gains (dB) from positions to the access points of ``cells``.

    Parameters
    ----------
    radio, cells:
        The radio and the access points.
    rngs:
        The run's random streams (shadowing draws).
    n_clients:
        How many clients there are (shadowing is drawn for all of them at once).
    """

    def __init__(self, radio: Radio, cells: Cells, rngs: RngTree, n_clients: int) -> None:
        self.radio, self.rngs, self.n_clients = radio, rngs, n_clients
        self.ap_xy_m = np.asarray(cells.access_points, dtype=float).reshape(-1, 2)
        self.association = cells.association
        self.boresights_deg = cells.boresights_deg()
        self.images_m = np.asarray(cells.images_m(), dtype=float)
        self.max_dbm = max_powers_dbm(radio, n_clients)
        self._independent: dict[int, np.ndarray] = {}
        self._fields: dict[int, tuple[float, float, np.ndarray]] = {}
        self._los_draws: dict[int, np.ndarray] = {}  # a uniform draw per client and site
        self._indoor: np.ndarray | None = None  # each client's outdoor-to-indoor loss (dB)

    def offsets_m(self, ap: int, x_m: np.ndarray,
                  y_m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(dx, dy) from access point ``ap`` to each client: to its nearest image under
        a wraparound layout."""
        dx, dy = x_m - self.ap_xy_m[ap, 0], y_m - self.ap_xy_m[ap, 1]
        for ox, oy in self.images_m[1:]:
            ix, iy = x_m - self.ap_xy_m[ap, 0] - ox, y_m - self.ap_xy_m[ap, 1] - oy
            nearer = ix * ix + iy * iy < dx * dx + dy * dy
            dx, dy = np.where(nearer, ix, dx), np.where(nearer, iy, dy)
        return dx, dy

    def antenna_db(self, ap: int, dx: np.ndarray, dy: np.ndarray) -> np.ndarray | float:
        """The access point's antenna gain toward offsets (dx, dy) (0 without a pattern)."""
        boresight = self.boresights_deg[ap]
        if boresight is None:
            return 0.0
        return sector_gain_db(np.degrees(np.arctan2(dy, dx)) - boresight)

    def gain_db(self, ap: int, x_m: np.ndarray, y_m: np.ndarray,
                clients: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Mean path gain (dB: path loss, shadowing and the site's antenna) of ``clients``
        at (x_m, y_m) toward access point ``ap``."""
        dx, dy = self.offsets_m(ap, x_m, y_m)
        path_loss = self.radio.path_loss
        if isinstance(path_loss, Tr38901):
            gain = self._tr38901_gain_db(path_loss, ap, np.hypot(dx, dy), x_m, y_m, clients)
        else:
            gain = -path_loss_db(path_loss, np.hypot(dx, dy))
            if self.radio.shadowing_db > 0:
                gain = gain - self.radio.shadowing_db * self._shadowing(ap, x_m, y_m, clients)
        return np.asarray(gain + self.antenna_db(ap, dx, dy))

    def los(self, model: Tr38901, ap: int, d2d_m: np.ndarray,
            clients: np.ndarray | slice = slice(None)) -> np.ndarray:
        """Whether each of ``clients``, ``d2d_m`` metres from site ``ap``, sees it in line
        of sight: its own uniform draw for that site against the LoS probability."""
        if ap not in self._los_draws:
            self._los_draws[ap] = self.rngs.stream(f"radio/los/{ap}").random(self.n_clients)
        return model.is_los(d2d_m, self._los_draws[ap][clients])

    def _tr38901_gain_db(self, model: Tr38901, ap: int, d2d_m: np.ndarray, x_m: np.ndarray,
                         y_m: np.ndarray, clients: np.ndarray | slice) -> np.ndarray:
        """Path gain under a 3GPP scenario: each client-site pair's LoS state (its uniform
        draw against the LoS probability at its distance), the state's loss and shadow
        fading, and the outdoor-to-indoor loss of indoor clients."""
        los = self.los(model, ap, d2d_m, clients)
        gain = -model.pair_loss_db(d2d_m, los) - model.pair_sigma_db(d2d_m, los) * \
            self._shadowing(ap, x_m, y_m, clients)
        if model.indoor_fraction > 0:
            if self._indoor is None:
                rng = self.rngs.stream("radio/indoor")
                inside = rng.random(self.n_clients) < model.indoor_fraction
                depth = np.minimum(rng.uniform(0, model.max_indoor_m, self.n_clients),
                                   rng.uniform(0, model.max_indoor_m, self.n_clients))
                self._indoor = np.where(inside, model.o2i_db(depth, rng.standard_normal(
                    self.n_clients)), 0.0)
            gain = gain - self._indoor[clients]
        return np.asarray(gain)

    def assign(self, x_m: np.ndarray, y_m: np.ndarray,
               clients: np.ndarray | slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
        """(serving access point, mean path gain toward it in dB) of each client."""
        def nearness(ap: int) -> tuple[np.ndarray, np.ndarray | float]:
            """(squared distance, antenna gain): nearer first, then the sector facing."""
            dx, dy = self.offsets_m(ap, x_m, y_m)
            return dx * dx + dy * dy, self.antenna_db(ap, dx, dy)

        best_ap = np.zeros(x_m.shape[0], dtype=np.int64)
        best_gain = self.gain_db(0, x_m, y_m, clients)
        best_d2, best_ant = nearness(0)
        for ap in range(1, self.ap_xy_m.shape[0]):
            gain = self.gain_db(ap, x_m, y_m, clients)
            if self.association == "nearest":
                d2, ant = nearness(ap)
                better = (d2 < best_d2) | ((d2 == best_d2) & (ant > best_ant))
                best_d2 = np.where(better, d2, best_d2)
                best_ant = np.where(better, ant, best_ant)
            else:
                better = gain > best_gain
            best_ap[better] = ap
            best_gain = np.where(better, gain, best_gain)
        return best_ap, best_gain

    def tx_power_dbm(self, gain_db: np.ndarray) -> np.ndarray:
        """Each client's transmit power under the power-control rule (``-inf``: silenced;
        :mod:`simfl.sim.radio.power_control`)."""
        rule = self.radio.power_control
        control = implementation_of(rule, "network.radio.power_control.kind")
        return np.asarray(control(rule, self.radio, gain_db, self.max_dbm))

    def _shadowing(self, ap: int, x_m: np.ndarray, y_m: np.ndarray,
                   clients: np.ndarray | slice) -> np.ndarray:
        """Standard normal shadowing of ``clients`` toward ``ap`` (unit variance)."""
        if self.radio.shadowing_corr_m == 0:
            if ap not in self._independent:
                rng = self.rngs.stream(f"radio/shadowing/{ap}")
                self._independent[ap] = rng.standard_normal(self.n_clients)
            return self._independent[ap][clients]
        if ap not in self._fields:
            self._fields[ap] = self._lattice(ap, x_m, y_m)
        x0, y0, field = self._fields[ap]
        step = self.radio.shadowing_corr_m / LATTICE_STEPS
        ix = np.clip(np.rint((x_m - x0) / step).astype(np.int64), 0, field.shape[1] - 1)
        iy = np.clip(np.rint((y_m - y0) / step).astype(np.int64), 0, field.shape[0] - 1)
        return field[iy, ix]

    def _lattice(self, ap: int, x_m: np.ndarray,
                 y_m: np.ndarray) -> tuple[float, float, np.ndarray]:
        """A unit-variance field with correlation exp(-(|dx| + |dy|) / corr) over the
        clients' bounding box (grown by one correlation distance for movers)."""
        corr = self.radio.shadowing_corr_m
        step = corr / LATTICE_STEPS
        x0, y0 = float(x_m.min()) - corr, float(y_m.min()) - corr
        nx = int(math.ceil((float(x_m.max()) + corr - x0) / step)) + 1
        ny = int(math.ceil((float(y_m.max()) + corr - y0) / step)) + 1
        if nx * ny > MAX_LATTICE_POINTS:
            raise ConfigError("network.radio.shadowing_corr_m", corr,
                              f"a correlation distance whose lattice over the clients' area "
                              f"has at most {MAX_LATTICE_POINTS:,} points (here {nx * ny:,}; "
                              "use a larger distance, or 0 for independent shadowing)")
        rng = self.rngs.stream(f"radio/shadowing/{ap}")
        rho = math.exp(-step / corr)
        keep = math.sqrt(1.0 - rho * rho)
        field = rng.standard_normal((ny, nx))
        for k in range(1, nx):  # along x: exp(-|dx| / corr), unit variance
            field[:, k] = rho * field[:, k - 1] + keep * field[:, k]
        for j in range(1, ny):  # then along y: the product of the two correlations
            field[j, :] = rho * field[j - 1, :] + keep * field[j, :]
        return x0, y0, field


def path_loss_db(path_loss: PathLoss, d_m: np.ndarray) -> np.ndarray:
    """The mean loss (dB) of ``path_loss`` at each distance of ``d_m`` (metres): its
    implementation, called ``impl(cfg, d_m)`` (by default the config's ``loss_db``)."""
    return np.asarray(implementation_of(path_loss, "network.radio.path_loss.kind")(path_loss,
                                                                                   d_m))


implements(PathLoss, lambda cfg, d_m: cfg.loss_db(d_m))


def max_powers_dbm(radio: Radio, n_clients: int) -> np.ndarray:
    """Each client's maximum transmit power (dBm): ``radio.tx_power_dbm``, one for all or
    one per client (a list of another length is one line)."""
    power = radio.tx_power_dbm
    if not isinstance(power, tuple):
        return np.full(n_clients, float(power))
    if len(power) != n_clients:
        raise ConfigError("network.radio.tx_power_dbm", f"a list of {len(power)} powers",
                          f"one power, or a list of task.n_clients = {n_clients} powers")
    return np.asarray(power, dtype=float)


def build_radio_map(placement: Placement, cells: Cells, radio: Radio, n_clients: int,
                    rngs: RngTree) -> tuple[RadioMap, Propagation]:
    """Place the clients, associate them and set their powers: the run's RadioMap, and
    the propagation that moves it (mobility)."""
    x_m, y_m = place(placement, n_clients, rngs.stream("placement"), cells)
    propagation = Propagation(radio, cells, rngs, n_clients)
    ap, gain_db = propagation.assign(x_m, y_m)
    radio_map = RadioMap(x_m=x_m, y_m=y_m, ap_xy_m=propagation.ap_xy_m, ap=ap, gain_db=gain_db,
                         tx_power_dbm=propagation.tx_power_dbm(gain_db),
                         noise_dbm=radio.noise_dbm, bandwidth_hz=radio.bandwidth_hz,
                         ap_tx_power_dbm=radio.ap_tx_power_dbm, gains_toward=propagation.gain_db)
    return radio_map, propagation
