"""Checks of a scenario that need no training, run by ``simfl validate`` and before a run.

A :class:`~simfl.core.config.Scenario` validates each field and the rules between
fields when it is built. Some problems show only against the data, the files or the
machine: more clients than training samples, a partition that cannot give every client
its minimum, a per-client list of the wrong length, a trace file that is missing or
malformed, or a population too large for the memory available. :func:`preflight` finds
those before anything large is allocated, so that ``simfl validate`` passing means
``simfl run`` does not fail on its input. Errors are :class:`ConfigError` (exit 2, one
line naming the field).

Import cost: numpy and the timing-side modules only, never torch.
"""

from __future__ import annotations

from simfl.core.config import Scenario
from simfl.preflight.airtime import upload_airtime_warnings
from simfl.preflight.data import check_data, check_labels_exist, check_per_client_lists
from simfl.preflight.files import check_files
from simfl.preflight.machine import available_memory
from simfl.preflight.memory import (BYTES_PER_CLIENT, BYTES_PER_INVITEE, DATA_COPIES,
                                    MemoryEstimate, check_memory, estimate_memory)
from simfl.preflight.sizes import MAX_MODEL_BYTES, check_sizes, check_uplink_rate
from simfl.preflight.placement import check_placement
from simfl.preflight.trace import check_trace

__all__ = [
    "preflight", "upload_airtime_warnings", "check_sizes", "check_uplink_rate", "check_memory", "estimate_memory",
    "available_memory", "MemoryEstimate", "check_per_client_lists", "check_labels_exist",
    "check_data", "check_files", "check_placement", "check_trace", "MAX_MODEL_BYTES",
    "BYTES_PER_CLIENT",
    "BYTES_PER_INVITEE", "DATA_COPIES",
]


def preflight(scenario: Scenario, whole_files: bool = False) -> None:
    """Raise a :class:`ConfigError` (or a :class:`~simfl.core.datafiles.DataFileError`)
    for the first problem that training would not fix.

    Order: sizes and memory first (nothing is allocated before; the data files' sizes
    come from their headers), then the data files, the per-client lists, the data set
    against the partition, the trace file and the positions. ``whole_files`` (``simfl
    validate``) also reads the data files that cannot be checked without parsing them
    (LEAF JSON).
    """
    check_sizes(scenario)
    check_uplink_rate(scenario)
    check_memory(scenario)
    check_files(scenario, whole_files)
    check_per_client_lists(scenario)
    check_labels_exist(scenario)
    check_data(scenario)
    check_trace(scenario)
    check_placement(scenario)
