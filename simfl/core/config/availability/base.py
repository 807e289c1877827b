"""The availability extension point: when a client is online and can be selected."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from simfl.core.config.node import Choice


@dataclass(frozen=True)
class Availability(Choice, point="availability"):
    """When a client is online and can be selected."""

    #: whether the builder must pass each client's label counts
    needs_labels: ClassVar[bool] = False
