"""A scripted stand-in for a generator, for the DCF's hand-checked tests."""


class Script:
    """A stand-in generator whose backoffs are given in order."""

    def __init__(self, *draws):
        self.draws = list(draws)

    def integers(self, low, high):
        value = self.draws.pop(0)
        assert low <= value < high
        return value
