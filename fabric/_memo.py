"""Per-fabric memos: where analyses keep what they derived from one fabric.

An analysis that asks the same question of a fabric many times (a sweep over sizes, a
frontier over batches) caches the answer with :func:`fabric_memo`: the one place such
caches live. ``fabric_memo(fabric, owner)`` is a plain dict, one per (fabric, owner):

* **Key.** The fabric object itself (a :class:`~fabric.Fabric` compares and hashes by
  identity), then ``owner``, a string naming who caches: by convention the caching
  module's ``__name__``, so two modules never share (or overwrite) each other's keys.
  Inside the dict the owner chooses its keys; they must hold everything besides the
  fabric that the value depends on (sizes, ranks, a transport's fields...).
* **Lifetime.** The fabric's: the memos are held weakly (``weakref.WeakKeyDictionary``)
  and go when the fabric is collected. They are not stored on the instance, so a copy of a
  fabric (``copy.copy``) carries none of them.
* **Invalidation.** None is needed: a fabric is immutable. A degraded copy
  (:meth:`~fabric.Fabric.without`) or a :meth:`~fabric.Fabric.replace` is another object
  and starts with empty memos.

Values are shared by every caller: return them read-only (a tuple, a numpy array with
``flags.writeable = False``) or never hand them out to be changed.

Examples
--------
>>> import topologies
>>> f = topologies.build("torus:2x2")
>>> memo = fabric_memo(f, "example")
>>> memo.setdefault("chips", len(f.endpoints))
4
>>> fabric_memo(f, "example") is memo, fabric_memo(f, "other") is memo
(True, False)
>>> fabric_memo(f.without(chips=["chip0"]), "example")     # another fabric: its own memo
{}
"""

import weakref

__all__ = []

_MEMOS = weakref.WeakKeyDictionary()


def fabric_memo(fabric, owner):
    """The dict in which ``owner`` (a string, by convention its module's ``__name__``)
    caches facts about ``fabric``; created empty on first use (module docstring: key,
    lifetime, invalidation)."""
    memos = _MEMOS.get(fabric)
    if memos is None:
        memos = _MEMOS[fabric] = {}
    memo = memos.get(owner)
    if memo is None:
        memo = memos[owner] = {}
    return memo
