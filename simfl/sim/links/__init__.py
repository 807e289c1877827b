"""Link loss models: whether each transfer attempt arrives (erasure, Gilbert-Elliott, fading)."""
