"""HIP C++ kernel sources, shipped as package data and read with importlib.resources."""
