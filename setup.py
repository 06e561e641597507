"""Package discovery only (everything else is in pyproject.toml).

The repository folders plugins/ and kernels/ install under the import names
rocm_array_plugins and rocm_array_kernels.
"""

from setuptools import find_packages, setup

RENAMED = {"rocm_array_plugins": "plugins", "rocm_array_kernels": "kernels"}

packages = find_packages(include=["rocm_array", "rocm_array.*"])
for name, folder in RENAMED.items():
    packages += [name] + [f"{name}.{p}" for p in find_packages(folder)]

setup(packages=packages, package_dir={"rocm_array": "rocm_array", **RENAMED})
