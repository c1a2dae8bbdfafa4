"""Shared by every test: NumPy's BLAS runs on one thread, set before NumPy is imported.

The real-model checks compare our float32 forward passes with the reference framework's
at the level of float32 rounding (e.g. attention within 5e-6 of transformers). A
multi-threaded BLAS sums in another order and moves the last bits: measured on SmolLM2's
20-token sentence, attention differs by up to 5.3e-6 with two OpenBLAS threads and 4.1e-6
with one. One thread makes every run sum the same way (and avoids BLAS threads fighting
the browser tests' servers for the two cores). Servers the tests start inherit it.
"""

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
