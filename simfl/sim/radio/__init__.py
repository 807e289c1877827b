"""The shared radio: positions, path gains, fading with memory, the shared band, interference."""
