"""Device energy: sources (batteries, infinite), charging windows, the power per activity
and its changes within a transfer whose radio is on in bursts."""
