"""Pin the public names of each package, so nothing becomes public by accident.

Every name a package exports must be listed in its ``__all__`` and come from an
underscored module; a test per package checks the declared set is what exists.
"""

import importlib

import pytest


@pytest.mark.parametrize("package", ["fabric", "topologies", "analysis"])
def test_all_names_exist_and_are_unique(package):
    mod = importlib.import_module(package)
    assert len(mod.__all__) == len(set(mod.__all__)), "a public name is exported twice"
    for name in mod.__all__:
        assert hasattr(mod, name), f"{package}.{name} is in __all__ but missing"


@pytest.mark.parametrize("package", ["fabric", "topologies", "analysis"])
def test_no_public_submodules(package):
    mod = importlib.import_module(package)
    public_modules = [n for n, v in vars(mod).items()
                      if not n.startswith("_") and type(v).__name__ == "module"]
    assert public_modules == [], f"{package} exposes modules: {public_modules}"


def test_core_names_are_public():
    import analysis
    import fabric
    import topologies
    for name in ("Fabric", "FabricError", "SpecError", "AddressMapError", "TranslationError",
                 "RoutingError", "parse_size", "parse_bandwidth", "GB", "GiB", "LinkTech"):
        assert name in fabric.__all__
    for name in ("build", "hypermesh", "torus", "mesh", "fat_tree", "leaf_spine",
                 "rail_optimized", "switched", "dragonfly", "SpecError", "PRESETS"):
        assert name in topologies.__all__
    assert "metrics" in analysis.__all__
