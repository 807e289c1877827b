"""IEEE 802.11 DCF (CSMA/CA) on the uplink: timing, Bianchi's fixed point, the slot-level DCF."""
