"""Plain data across the process boundary: a function test's value, from the program's
process to the grader (stdlib only; shipped into the image, also used on the host).

`encode` (in the test's child) turns a value made of None, bool, int, float, complex,
str, bytes, list, tuple, dict, set and frozenset into a tagged, JSON-shaped text. It reads
every object through its *builtin* type's own accessors (`int.__index__`, `dict.items`,
...), never through methods the program may have overridden, so a subclass with a custom
`__eq__` crosses as the plain data it holds and its tricks stay behind. Anything else, a
cycle, nesting deeper than MAX_DEPTH or text longer than the cap is `NotPlain`.
`decode` (outside the program) rebuilds the value from that text with the same limits;
it never evaluates anything. Deliberately not here: comparing values (sandbox/checks.py).
"""

from __future__ import annotations

MAX_DEPTH = 100
VALUE_CAP = 256 << 10  # characters of encoded text


class NotPlain(ValueError):
    """The value cannot cross as plain data; the message says why in a few words."""


try:
    from _json import encode_basestring_ascii as quote
except ImportError:  # pragma: no cover - non-CPython
    from json.encoder import encode_basestring_ascii as quote

_SCALARS = ((bool, "b"), (int, "i"), (float, "f"), (complex, "c"), (str, "s"), (bytes, "y"))
_ITEMS = (
    (list, "l", list.__iter__),
    (tuple, "t", tuple.__iter__),
    (dict, "d", dict.items),
    (set, "e", set.__iter__),
    (frozenset, "z", frozenset.__iter__),
)


def _scalar(base: type, value: object) -> str:
    if base is bool:
        return "1" if int.__index__(value) else "0"
    if base is int:
        return hex(int.__index__(value))  # no digit limit, unlike str(int)
    if base is float:
        return float.__repr__(value)
    if base is complex:
        return complex.__repr__(value)
    if base is str:
        return quote(str.__str__(value))
    return quote(bytes.hex(bytes.__getitem__(value, slice(None))))


def encode(value: object, cap: int = VALUE_CAP) -> str:
    """`value` as tagged text, e.g. ["l",[["i","0x1"],["s","a"]]]; raises NotPlain."""
    parts: list[str] = []
    size = [0]
    active: set[int] = set()

    def put(text: str) -> None:
        size[0] += len(text)
        if size[0] > cap:
            raise NotPlain(f"it is bigger than {cap >> 10} KB as plain data")
        parts.append(text)

    def walk(obj: object, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise NotPlain(f"it is nested deeper than {MAX_DEPTH} levels")
        kind = type(obj)
        if obj is None:
            put('["n"]')
            return
        for base, tag in _SCALARS:
            if issubclass(kind, base):
                put(f'["{tag}",' + (_scalar(base, obj) if base in (str, bytes) else f'"{_scalar(base, obj)}"') + "]")
                return
        for base, tag, items in _ITEMS:
            if issubclass(kind, base):
                if id(obj) in active:
                    raise NotPlain("it contains itself")
                active.add(id(obj))
                put(f'["{tag}",[')
                for i, item in enumerate(items(obj)):
                    if i:
                        put(",")
                    if base is dict:
                        put("[")
                        walk(item[0], depth + 1)
                        put(",")
                        walk(item[1], depth + 1)
                        put("]")
                    else:
                        walk(item, depth + 1)
                put("]]")
                active.discard(id(obj))
                return
        raise NotPlain(f"a {kind.__name__} object is not plain data")

    walk(value, 0)
    return "".join(parts)


def decode(text: str, cap: int = VALUE_CAP) -> object:
    """The value `encode` wrote; raises NotPlain for anything malformed or too big."""
    import json

    if len(text) > cap:
        raise NotPlain(f"it is bigger than {cap >> 10} KB as plain data")
    try:
        tree = json.loads(text)
        return _build(tree, 0)
    except (ValueError, TypeError, KeyError, IndexError, RecursionError) as exc:
        raise NotPlain(f"malformed plain data ({type(exc).__name__})") from None


def _build(node: object, depth: int) -> object:
    if depth > MAX_DEPTH + 1 or not isinstance(node, list) or not node or not isinstance(node[0], str):
        raise ValueError("bad node")
    tag = node[0]
    if tag == "n":
        return None
    arg = node[1]
    if tag in "bifcsy" and not isinstance(arg, str):
        raise ValueError("bad scalar")
    if tag == "b":
        return arg == "1"
    if tag == "i":
        return int(arg, 16)
    if tag == "f":
        return float(arg)
    if tag == "c":
        return complex(arg)
    if tag == "s":
        return arg
    if tag == "y":
        return bytes.fromhex(arg)
    if not isinstance(arg, list):
        raise ValueError("bad container")
    if tag == "d":
        return {_build(k, depth + 1): _build(v, depth + 1) for k, v in arg}
    items = [_build(item, depth + 1) for item in arg]
    kinds = {"l": list, "t": tuple, "e": set, "z": frozenset}
    return kinds[tag](items)
