"""The core plugins of rocm_array, one package per op family (installed as rocm_array_plugins)."""
