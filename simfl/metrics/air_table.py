"""``aircomp.csv``: one row per round's analog slot (``server.algorithm.kind = "aircomp"``)."""

from __future__ import annotations

from simfl.core.air_slot import AirSlot

AIR_COLUMNS = ("round", "t_start_s", "slot_s", "n_participants", "n_truncated", "eta", "mse",
               "participants", "truncated")


def air_row(slot: AirSlot) -> tuple[int | float | str, ...]:
    """The row of ``slot``: the client lists as space-separated ids."""
    return (slot.round, slot.t_start_s, slot.slot_s, len(slot.participants),
            len(slot.truncated), slot.eta, slot.mse, " ".join(map(str, slot.participants)),
            " ".join(map(str, slot.truncated)))
