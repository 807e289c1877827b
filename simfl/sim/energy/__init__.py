"""Device energy: sources (batteries, infinite), charging windows and the power per activity."""
