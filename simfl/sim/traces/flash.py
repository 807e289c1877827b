"""FLASH state traces: when a device is ready (screen locked, on WiFi, charging).

A trace is a JSON list of devices, or an object whose values are devices; each device
has ``messages``, lines ``"YYYY-MM-DD HH:MM:SS<TAB>state"`` (one string with newlines,
or a list of strings). :data:`FLASH_STATES` maps the states that change a flag; other
states are ignored. Every flag starts false. Times are seconds since
:data:`FLASH_ORIGIN`, clipped at 0; a device still ready at its last message is taken
offline at that message. Devices get the ids 0..K-1 in their order.
"""

from __future__ import annotations

import datetime as dt

from simfl.core.errors import ConfigError
from simfl.sim.traces.data import FIELD, Located, Rows, TraceData, build_trace

FLASH_ORIGIN = dt.datetime(2020, 1, 2)
#: FLASH state -> (flag, value); ready = all three flags
FLASH_STATES = {"screen_lock": ("locked", True), "screen_unlock": ("locked", False),
                "wifi": ("wifi", True), "2g": ("wifi", False), "3g": ("wifi", False),
                "4g": ("wifi", False), "5g": ("wifi", False), "unknown": ("wifi", False),
                "battery_charged_on": ("charging", True),
                "battery_charged_off": ("charging", False)}


def from_flash(devices: object, where: str = "FLASH trace") -> TraceData:
    """Ready intervals (locked, WiFi, charging) of FLASH state-trace devices, ids 0..K-1.

    ``devices`` is the parsed JSON value; any other shape fails with one line.
    """
    if isinstance(devices, dict):
        devices = list(devices.values())
    if not isinstance(devices, list):
        raise ConfigError(FIELD, Located(f"{where}: a JSON {type(devices).__name__}"),
                          "a JSON list of devices or an object whose values are devices")
    rows: Rows = {}
    for cid, device in enumerate(devices):
        messages = device.get("messages", "") if isinstance(device, dict) else None
        if isinstance(messages, list) and all(isinstance(m, str) for m in messages):
            lines = messages
        elif isinstance(messages, str):
            lines = messages.splitlines()
        else:
            raise ConfigError(FIELD, Located(f"{where} device {cid}"), "an object with a 'messages' "
                              "field: one string of lines, or a list of strings")
        flags = {"locked": False, "wifi": False, "charging": False}
        ready_since: float | None = None
        t_s = 0.0
        rows[cid] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            stamp, _, state = line.partition("\t")
            try:
                when = dt.datetime.strptime(stamp.strip(), "%Y-%m-%d %H:%M:%S")
            except ValueError:
                raise ConfigError(FIELD, Located(f"{where} device {cid} message {number}"),
                                  "'YYYY-MM-DD HH:MM:SS<TAB>state'") from None
            t_s = max(0.0, (when - FLASH_ORIGIN).total_seconds())
            if state.strip() in FLASH_STATES:
                flag, value = FLASH_STATES[state.strip()]
                flags[flag] = value
            ready = all(flags.values())
            if ready and ready_since is None:
                ready_since = t_s
            elif not ready and ready_since is not None:
                if t_s > ready_since:
                    rows[cid].append((ready_since, t_s, f"device {cid} message {number}"))
                ready_since = None
        if ready_since is not None and t_s > ready_since:
            rows[cid].append((ready_since, t_s, f"device {cid} end"))
    return build_trace(rows, None, where)
