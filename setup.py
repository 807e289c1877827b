from setuptools import find_packages, setup

# simfl's packages, plus the top-level scenarios/ folder shipped as simfl.scenarios
# (setup.cfg maps its directory), so installed copies find the bundled scenarios
setup(packages=find_packages(include=["simfl", "simfl.*"]) + ["simfl.scenarios"])
