"""Arrays from NumPy, CuPy, PyTorch (and anything with DLPack) as host data,
and their element types as a ktune spec names them."""
from __future__ import annotations

from typing import Any

import numpy as np

from . import _ktune

_TYPES = {
    "float32": "float", "float64": "double", "float16": "half", "bfloat16": "bf16",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64", "bool": "uint8",
    "complex64": "float2", "complex128": "double2",
}


def spec_type(dtype: Any, what: str) -> str:
    """The spec's element type of a NumPy dtype (bf16 for a bfloat16 tensor's)."""
    name = getattr(dtype, "name", str(dtype))
    if name not in _TYPES:
        raise _ktune.BadInput(f"{what}: element type {name} has no CUDA counterpart in ktune")
    return _TYPES[name]


class _Bf16:
    """A bfloat16 tensor's bits (NumPy has no bfloat16): uint16 data, typed bf16."""

    name = "bfloat16"


def host_array(value: Any) -> np.ndarray | None:
    """The value's data on the host as a contiguous NumPy array (a copy when it
    lives on a GPU), or None for a scalar. bfloat16 tensors come back as their
    bits in a uint16 array whose ``ktune_dtype`` says bfloat16."""
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (np.generic, int, float, bool)) or value is None:
        return None
    module = type(value).__module__.split(".")[0]
    if module == "torch":
        import torch

        t = value.detach()
        if t.dtype == torch.bfloat16:
            out = np.ascontiguousarray(t.view(torch.int16).cpu().numpy().view(np.uint16))
            return _typed(out, _Bf16())
        return np.ascontiguousarray(t.cpu().numpy())
    if module == "cupy":
        return np.ascontiguousarray(value.get())
    if hasattr(value, "__dlpack__"):
        device_type = value.__dlpack_device__()[0] if hasattr(value, "__dlpack_device__") else 1
        if device_type != 1:
            raise _ktune.BadInput(f"a {type(value).__name__} on a GPU: ktune copies PyTorch and CuPy arrays "
                                  "from the GPU; copy this one to the host first")
        return np.ascontiguousarray(np.from_dlpack(value))
    if isinstance(value, (list, tuple)):
        return np.ascontiguousarray(np.asarray(value))
    raise _ktune.BadInput(f"a {type(value).__name__} is no array or scalar ktune can pass to a kernel")


class _TypedArray(np.ndarray):
    ktune_dtype: Any = None


def _typed(array: np.ndarray, dtype: Any) -> np.ndarray:
    out = array.view(_TypedArray)
    out.ktune_dtype = dtype
    return out


def dtype_of(array: np.ndarray) -> Any:
    """The element type an array stands for (bfloat16 for a bf16 tensor's bits)."""
    return getattr(array, "ktune_dtype", None) or array.dtype
