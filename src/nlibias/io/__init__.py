"""Reading and writing run-directory files: samples (:mod:`nlibias.io.samples`), predictions
(:mod:`nlibias.io.predictions`), JSON; all writes atomic (:mod:`nlibias.io.atomic`).

The package imports nothing itself, so that a module which needs one of them (the atomic writer,
say) does not load numpy with the predictions reader.
"""
