"""``NAME[SUBSCRIPT]=value``: bash's assignment of one array element, read exactly or not at all.

Soundness (docs/hook.md): only a literal index on an array whose elements are all known is modelled,
as bash does it (``a[0]=gh; a[1]=pr`` builds ``("${a[@]}")`` = ``gh pr``; a scalar ``x`` becomes
``x[0]``). Anything else — an index computed at run time, one past the end (bash arrays are sparse),
``+=`` on an element, a value produced at run time, an element assigned only for one command — makes
the whole array unknown, so whatever it later spells is undetermined, never a guess.
"""

from __future__ import annotations

from collections.abc import Mapping

from hook.shell.syntax import DYN


def assign_element(arrays: dict[str, list[str] | None], scalars: dict[str, str | None], env: Mapping[str, str],
                   name: str, value: str | None, *, prefix: bool) -> None:
    """Apply ``name`` (``a[N]`` or ``a[N]+``) = ``value`` to the shell's ``arrays`` and ``scalars``."""
    base, _, rest = name.removesuffix("+").partition("[")
    index = rest[:-1]
    if base in arrays:
        elements = arrays[base]
    elif base in scalars:
        scalar = scalars[base]
        elements = None if scalar is None or DYN in scalar else [scalar]
    else:
        elements = None if base in env else []
    scalars.pop(base, None)
    known = elements is not None and value is not None and DYN not in value and index.isdigit()
    if not known or prefix or name.endswith("+") or int(index) > len(elements or []):
        arrays[base] = None
        return
    assert elements is not None and value is not None
    i = int(index)
    arrays[base] = [*elements[:i], value, *elements[i + 1 :]]
