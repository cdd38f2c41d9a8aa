"""Topology builders: spec strings and parameters -> :class:`fabric.Fabric`."""

from fabric import SpecError

__all__ = ["SpecError"]
