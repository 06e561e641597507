"""The core plugins of rocm_array, one package per op family (installed as rocm_array_plugins).

A process may meet a plugin module before ``rocm_array`` itself: unpickling a function of the
namespace (a Dask or multiprocessing worker) imports ``rocm_array_plugins.elementwise.front_creation``
first. Importing the package here, before any plugin's code runs, assembles the namespace with every
plugin whole; had a plugin been half-initialised when the namespace was assembled, its functions and
the Array's NumPy protocols would be missing for the life of the process.
"""

import rocm_array  # noqa: F401  (assembles the namespace: see above)
