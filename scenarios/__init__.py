"""The bundled scenario scripts, installed as the package ``simfl.scenarios``.

Each module defines ``scenario()`` returning a :class:`simfl.Scenario`; ``simfl run NAME``
finds them by name (:func:`simfl.core.config.scripts.resolve_scenario_path`). They are
loaded as scripts, not imported as modules of this package.
"""
