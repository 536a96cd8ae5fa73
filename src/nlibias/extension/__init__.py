"""Extend a templated benchmark the BBNLI-next way (``nlibias extend``): :mod:`.pipeline` runs the
stages of :mod:`.stages` with resume, configured by :mod:`.config`."""
