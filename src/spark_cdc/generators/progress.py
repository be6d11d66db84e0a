"""Progress bars with ``tqdm`` when it is installed (the ``generators`` extra); silent without."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Protocol, TypeVar

Item = TypeVar("Item")


class Progress(Protocol):
    """What the generators use of a progress bar."""

    def update(self, n: int = 1) -> Any: ...

    def __enter__(self) -> Progress: ...

    def __exit__(self, *exc: object) -> None: ...


class _Silent:
    """Counts, shows nothing."""

    def __init__(self, total: int | None = None, **_: object) -> None:
        self.total, self.n = total, 0

    def update(self, n: int = 1) -> None:
        self.n += n

    def __enter__(self) -> _Silent:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def progress(total: int, desc: str, unit: str, show: bool) -> Progress:
    """A bar over ``total`` items: tqdm's when it is installed and ``show`` is set."""
    if show:
        try:
            from tqdm import tqdm
        except ImportError:
            return _Silent(total)
        return tqdm(total=total, desc=desc, unit=unit)
    return _Silent(total)


def iterate(items: Iterable[Item], desc: str, unit: str, show: bool) -> Iterator[Item]:
    """``items``, with tqdm's bar when it is installed and ``show`` is set."""
    if show:
        try:
            from tqdm import tqdm
        except ImportError:
            return iter(items)
        return iter(tqdm(items, desc=desc, unit=unit))
    return iter(items)
