"""How many MPDUs a ``csma_ca`` upload is cut into: the DCF simulates each one.

The 802.11 DCF model contends for every MPDU of every upload, so its work grows with
the update's size over ``mpdu_payload_bytes`` (about five microseconds of CPU per MPDU
and station on one core). :data:`MAX_MPDUS_PER_UPLOAD` bounds it: a gigabyte update at
the default 1023-byte payload, where one-byte MPDUs of a 100 MB model would take hours.
"""

from __future__ import annotations

from simfl.core.config import Scenario
from simfl.core.config.csma import CsmaCaMac
from simfl.core.errors import ConfigError

#: the most MPDUs one upload may be cut into
MAX_MPDUS_PER_UPLOAD = 1_000_000


def check_mpdus(scenario: Scenario, upload_bytes: int) -> None:
    """One line when a ``csma_ca`` upload of ``upload_bytes`` takes more than
    :data:`MAX_MPDUS_PER_UPLOAD` MPDUs."""
    mac = scenario.network.mac
    if not isinstance(mac, CsmaCaMac):
        return
    n = -(-int(upload_bytes) // mac.mpdu_payload_bytes)
    if n > MAX_MPDUS_PER_UPLOAD:
        least = -(-int(upload_bytes) // MAX_MPDUS_PER_UPLOAD)
        raise ConfigError("network.mac.mpdu_payload_bytes", mac.mpdu_payload_bytes,
                          f"a payload that cuts an upload into at most "
                          f"{MAX_MPDUS_PER_UPLOAD:,} MPDUs (the {upload_bytes:,}-byte update "
                          f"takes {n:,}; the DCF simulates each one): at least {least:,} "
                          "bytes, or a smaller model")
