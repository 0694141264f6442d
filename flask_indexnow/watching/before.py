"""The state of a watched object before a flush, as an object adapter functions can read.

Adapter functions (``url=``, ``published=`` …) read whatever they like: mapped
columns, ``@property``, ``hybrid_property``, methods, related objects. To give
them the values from before the flush, :class:`Shadows` builds a *shadow*: a
detached instance of the same class (made by SQLAlchemy's class manager, so no
``__init__`` runs and no event fires), never added to a session. Its mapped
attributes are filled lazily, on first read, from SQLAlchemy's own history of
the real object (``inspect(obj).attrs[name].history``): the old value of what
changed, the current value of the rest. Anything computed in Python on the
shadow therefore sees the old state.

Related objects are shadows too, built on demand: a many-to-one whose target
changed gives the old target, a collection gives its items from before the
flush (removed ones back, added ones out), and each related object shows its
own old column values when it changed in the same flush. Shadows are shared
within one flush, so cycles (``post.category.posts``) end.

What the shadow cannot know without SQL is an attribute the real object never
loaded. Such an attribute did not change in this flush, so the shadow reads it
from the real object (which loads it, on the flushing session, as the "after"
evaluation would anyway; the bridge evaluates "after" first, so this is rare).
The shadow itself never touches a session: no lazy load and no autoflush
happen through it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.orm import Mapper

_ORIGINAL = "indexnow_original"
_Loader = Callable[[Any, Any], Any]
#: Per mapper: attribute key → loader, copied into each shadow's state (SQLAlchemy
#: removes a loader from that copy once it has run).
_loaders: dict[Mapper[Any], dict[str, _Loader]] = {}


class Shadows:
    """The shadows of one flush: one per real object, built when first needed."""

    def __init__(self) -> None:
        self._made: dict[int, Any] = {}
        self._originals: list[Any] = []  # kept alive so that ids stay unique

    def of(self, obj: Any) -> Any:
        """The shadow of ``obj`` (``obj`` itself when it is not a mapped instance)."""
        if obj is None:
            return None
        shadow = self._made.get(id(obj))
        if shadow is not None:
            return shadow
        try:
            state = sa.inspect(obj)
        except sa.exc.NoInspectionAvailable:
            return obj
        if not isinstance(state, sa.orm.InstanceState):
            return obj
        mapper = state.mapper
        shadow = mapper.class_manager.new_instance()
        shadow_state = sa.inspect(shadow)
        shadow_state.info[_ORIGINAL] = (self, state)
        shadow_state.callables = dict(_loaders_of(mapper))
        self._made[id(obj)] = shadow
        self._originals.append(obj)
        return shadow


def _loaders_of(mapper: Mapper[Any]) -> dict[str, _Loader]:
    loaders = _loaders.get(mapper)
    if loaders is None:
        loaders = {}
        for prop in mapper.column_attrs:
            loaders[prop.key] = _column_loader(prop.key)
        for rel in mapper.relationships:
            loaders[rel.key] = _relationship_loader(rel.key, bool(rel.uselist))
        _loaders[mapper] = loaders
    return loaders


def _column_loader(key: str) -> _Loader:
    def load(shadow_state: Any, passive: Any) -> Any:
        _shadows, state = shadow_state.info[_ORIGINAL]
        return _old_scalar(state, key)

    return load


def _relationship_loader(key: str, uselist: bool) -> _Loader:
    def load(shadow_state: Any, passive: Any) -> Any:
        shadows, state = shadow_state.info[_ORIGINAL]
        if uselist:
            return [shadows.of(item) for item in _old_items(state, key)]
        return shadows.of(_old_scalar(state, key))

    return load


def _old_scalar(state: Any, key: str) -> Any:
    """The value of ``key`` before the flush (a column or a many-to-one target)."""
    history = state.attrs[key].history
    if history.deleted:
        return history.deleted[0]
    if history.unchanged:
        return history.unchanged[0]
    if key in state.dict and not history.added:
        return state.dict[key]
    # Never loaded (so unchanged), or set without its old value: the real object's value.
    return getattr(state.obj(), key)


def _old_items(state: Any, key: str) -> list[Any]:
    """The items of collection ``key`` before the flush: removed ones back, added ones out."""
    if key not in state.dict:
        return list(getattr(state.obj(), key))  # never loaded, so unchanged
    history = state.attrs[key].history
    return [*history.unchanged, *history.deleted]
