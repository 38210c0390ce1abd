"""Standard JSON for every file and line the project writes.

Python's ``json`` writes ``NaN``, ``Infinity`` and ``-Infinity`` for non-finite floats,
which is not JSON: other languages' parsers (and ``jq``) refuse the file. :func:`dumps`
writes such values as ``null`` and passes ``allow_nan=False``, so a value that slips past
the conversion fails loudly instead of writing a file others cannot read. Readers keep
using ``json.loads``, which still accepts ``NaN``/``Infinity`` in files written before.
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable


def finite(obj: Any, default: Callable[[Any], Any] | None = None) -> Any:
    """``obj`` with every non-finite float (NaN, +-inf) replaced by None, numpy scalars as Python ones."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, (str, int)):
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v, default) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v, default) for v in obj]
    item = getattr(obj, "item", None)
    if callable(item) and type(obj).__module__ == "numpy" and getattr(obj, "shape", None) == ():
        return finite(item())
    if default is not None:
        return finite(default(obj))
    return obj  # json.dumps raises TypeError for it, as it would have anyway


def dumps(obj: Any, *, default: Callable[[Any], Any] | None = None, **kw: Any) -> str:
    """``json.dumps`` that writes standard JSON: non-finite floats become ``null``."""
    return json.dumps(finite(obj, default), allow_nan=False, default=default, **kw)
