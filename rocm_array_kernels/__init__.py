"""HIP C++ kernel sources, shipped as package data (read by rocm_array.runtime.compiler from this folder)."""
