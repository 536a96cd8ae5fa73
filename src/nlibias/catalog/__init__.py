"""The benchmarks nlibias knows: the registry and the built-in definitions (one module each),
a layer above the measures and the reports they name."""
