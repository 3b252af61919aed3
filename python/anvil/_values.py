"""The one rule by which every entry point of the package reads numbers, names and paths.

A number is an integer: a Python int, a numpy integer, or a float (Python or numpy) that is
finite and whole (16.0 is 16; 1.9, NaN and inf are refused). bool, str, None and any other
object are not numbers. An array is a sequence or numpy array of such numbers: integer
arrays, float arrays whose every element is finite and whole, and object arrays whose every
element is a number; bool, str and other arrays are refused. Then each value must lie in the
argument's range (at most that of the C type the library reads: int32 or int64).

A value of the wrong type raises TypeError, a number outside its range or a float that is not
a whole number raises ValueError; both messages start with the argument's name (and an
element's index)."""
from __future__ import annotations

import math
import operator
import os

import numpy as np

INT32 = (-2**31, 2**31 - 1)
INT64 = (-2**63, 2**63 - 1)
_LIMITS = {np.dtype(np.int32): INT32, np.dtype(np.int64): INT64}


def _limits(dtype) -> tuple:
    """(min, max) of an integer dtype."""
    if dtype not in _LIMITS:
        _LIMITS[dtype] = (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max))
    return _LIMITS[dtype]


def _type_name(v) -> str:
    return "None" if v is None else type(v).__name__


def integer(v, what: str, lo: int = INT32[0], hi: int = INT32[1]) -> int:
    """v as an int in [lo, hi] under the rule above."""
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{what}: expected an integer, got a bool ({v!r})")
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            raise ValueError(f"{what}: {float(v)!r} is not finite; expected an integer")
        if not float(v).is_integer():
            raise ValueError(f"{what}: {float(v)!r} is not a whole number; expected an integer")
        i = int(v)
    else:
        try:
            i = operator.index(v)
        except TypeError:
            raise TypeError(f"{what}: expected an integer, got {_type_name(v)}") from None
    if not lo <= i <= hi:
        raise ValueError(f"{what}: {i} is out of range; expected an integer in [{lo}, {hi}]")
    return i


def _where(a: np.ndarray, flat: int) -> str:
    return "".join(f"[{i}]" for i in np.unravel_index(flat, a.shape)) if a.ndim else ""


def int_array(a, dtype, what: str, ndim=(1,), lo: int | None = None,
              hi: int | None = None) -> np.ndarray:
    """a as a C-contiguous array of `dtype` (np.int32 or np.int64) with one of the numbers of
    dimensions in `ndim` and every element in [lo, hi] (the dtype's range when None), under
    the rule above. An array of that dtype already in C order is returned as it is."""
    if (lo is None and hi is None and type(a) is np.ndarray and a.dtype == dtype
            and a.ndim in ndim and a.flags.c_contiguous):
        return a                  # the serving loop's case: nothing to convert or check
    dtype = np.dtype(dtype)
    lo = _LIMITS[dtype][0] if lo is None else lo
    hi = _LIMITS[dtype][1] if hi is None else hi
    if isinstance(a, (str, bytes, dict, set)) or a is None:
        raise TypeError(f"{what}: expected an array of integers, got {_type_name(a)}")
    try:
        arr = np.asarray(a)
    except (ValueError, TypeError) as e:     # ragged rows, objects numpy cannot hold
        raise ValueError(f"{what}: not an array of integers ({e})") from None
    if arr.ndim == 0:
        raise TypeError(f"{what}: expected an array of integers, got {_type_name(a)}")
    if arr.ndim not in ndim:
        raise ValueError(f"{what}: expected a {' or '.join(f'{n}-D' for n in ndim)} array "
                         f"of integers, got shape {arr.shape}")
    kind = arr.dtype.kind
    if kind in "iu" and lo <= _limits(arr.dtype)[0] and _limits(arr.dtype)[1] <= hi:
        return arr if arr.dtype == dtype and arr.flags.c_contiguous else \
            np.ascontiguousarray(arr, dtype=dtype)        # every value of the dtype fits
    if kind == "O":
        flat = arr.reshape(-1)
        vals = [integer(v, f"{what}{_where(arr, i)}", lo, hi) for i, v in enumerate(flat)]
        return np.array(vals, dtype=dtype).reshape(arr.shape)
    if kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.floor(arr))
    elif kind in "iu":
        bad = None
    else:
        raise TypeError(f"{what}: expected an array of integers, got dtype {arr.dtype}")
    if arr.size:
        if bad is not None and bad.any():
            i = int(np.flatnonzero(bad)[0])
            integer(arr.reshape(-1)[i], f"{what}{_where(arr, i)}", lo, hi)
        out = (arr < lo) | (arr > hi)
        if out.any():
            i = int(np.flatnonzero(out)[0])
            integer(arr.reshape(-1)[i], f"{what}{_where(arr, i)}", lo, hi)
    if arr.dtype == dtype and arr.flags.c_contiguous:
        return arr
    return np.ascontiguousarray(arr, dtype=dtype)


def name(v, what: str, none_ok: bool = False):
    """A str argument (None allowed where the library has a default)."""
    if isinstance(v, str) or (none_ok and v is None):
        return v
    raise TypeError(f"{what}: expected a str, got {_type_name(v)}")


def path(v, what: str, expected: str = "a path (str or os.PathLike)") -> str:
    """A file name: a str or an os.PathLike of one."""
    if isinstance(v, (str, os.PathLike)):
        p = os.fspath(v)
        if isinstance(p, str):
            return p
    raise TypeError(f"{what}: expected {expected}, got {_type_name(v)}")


def number(v, what: str) -> float:
    """A real number argument: int or float, not bool (the library checks its range)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                             np.floating)):
        raise TypeError(f"{what}: expected a number, got {_type_name(v)}")
    return float(v)


def setting(key, v, what: str) -> str:
    """One "key=value" of a scheduler's or cost model's parameters: the value a bool, a
    number (whole floats as integers) or a str; the library checks it against the key's
    type and range."""
    if not isinstance(key, str):
        raise TypeError(f"{what}: parameter names are str, got {_type_name(key)}")
    where = f"{what}: {key}"
    if isinstance(v, (bool, np.bool_)):
        return f"{key}={'true' if v else 'false'}"
    if isinstance(v, str):
        return f"{key}={v}"
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            raise ValueError(f"{where}: {float(v)!r} is not finite")
        return f"{key}={int(v) if float(v).is_integer() and abs(v) < 2**63 else float(v)!r}"
    try:
        i = operator.index(v)
    except TypeError:
        raise TypeError(f"{where}: expected a bool, a number or a str, got "
                        f"{_type_name(v)}") from None
    return f"{key}={integer(i, where, *INT64)}"
