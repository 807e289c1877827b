"""Medium access on the uplink: who may transmit when (ideal, TDMA, slotted ALOHA, the relay)."""
