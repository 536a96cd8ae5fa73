"""Run-directory files: samples, predictions, JSON, every write atomic (the package imports
nothing itself: the atomic writer does not load numpy with the predictions reader)."""
