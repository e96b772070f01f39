"""Array operations on NumPy arrays or torch tensors, for the vector environments' observations,
rewards and flags: NumPy on the CPU, torch on the CUDA device (or with array="torch" on the CPU).
An `*Ops` object names one array library and the engine's precision; the environments and
MujocoState compute through it. Below them, the rotation helpers MujocoState and the tasks' reset
noise use."""
from __future__ import annotations

import numpy as np


class NumpyOps:
    """NumPy arrays of the engine's precision (the CPU's views of the fields are NumPy already)."""
    name = "numpy"

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)

    def view(self, a):
        return a

    def asarray(self, a, dtype=None):
        return np.asarray(a, dtype=self.dtype if dtype is None else dtype)

    def index(self, a):
        """An integer index array as this library indexes with it."""
        return np.asarray(a, dtype=np.int64)

    def zeros(self, shape, dtype=None):
        return np.zeros(shape, dtype=self.dtype if dtype is None else dtype)

    def cat(self, arrays, axis=-1):
        return np.concatenate(arrays, axis=axis)

    def stack(self, arrays, axis=-1):
        return np.stack(arrays, axis=axis)

    einsum = staticmethod(np.einsum)

    @staticmethod
    def clip(a, lo, hi):
        return np.minimum(np.maximum(a, lo), hi)  # np.clip's wrappers cost more than its work on small arrays

    sin, cos, sqrt, isfinite = np.sin, np.cos, np.sqrt, np.isfinite

    def sum(self, a, axis):
        return a.sum(axis=axis)

    def all(self, a, axis):
        return a.all(axis=axis)

    def nan_to_num(self, a):
        """a with its non-finite entries 0: a itself when all are finite, else a new array."""
        finite = np.isfinite(a)
        return a if finite.all() else np.where(finite, a, a.dtype.type(0))

    def copy(self, a):
        return a.copy()

    def to_numpy(self, a):
        return np.asarray(a)

    def from_numpy(self, a):
        return np.asarray(a)


class TorchOps:
    """torch tensors on `device` ("cpu" or "cuda"), sharing the fields' memory through DLPack."""
    name = "torch"

    def __init__(self, dtype, device):
        import torch
        self.torch = torch
        self.dtype = torch.float64 if np.dtype(dtype) == np.float64 else torch.float32
        self.device = device

    def view(self, a):
        return self.torch.from_dlpack(a)

    def asarray(self, a, dtype=None):
        return self.torch.as_tensor(a, dtype=self.dtype if dtype is None else dtype, device=self.device)

    def index(self, a):
        """An integer index array as this library indexes with it (a tensor on the device)."""
        return self.torch.as_tensor(np.asarray(a, dtype=np.int64), device=self.device)

    def zeros(self, shape, dtype=None):
        return self.torch.zeros(shape, dtype=self.dtype if dtype is None else dtype, device=self.device)

    def cat(self, arrays, axis=-1):
        return self.torch.cat(arrays, dim=axis)

    def stack(self, arrays, axis=-1):
        return self.torch.stack(arrays, dim=axis)

    def einsum(self, spec, *ops):
        return self.torch.einsum(spec, *ops)

    def clip(self, a, lo, hi):
        return self.torch.clamp(a, lo, hi)

    def sin(self, a):
        return self.torch.sin(a)

    def cos(self, a):
        return self.torch.cos(a)

    def sqrt(self, a):
        return self.torch.sqrt(a)

    def isfinite(self, a):
        return self.torch.isfinite(a)

    def sum(self, a, axis):
        return a.sum(dim=axis)

    def all(self, a, axis):
        return a.all(dim=axis)

    def nan_to_num(self, a):
        """a with its non-finite entries 0 (a new tensor)."""
        return self.torch.nan_to_num(a, nan=0.0, posinf=0.0, neginf=0.0)

    def copy(self, a):
        return a.clone()

    def to_numpy(self, a):
        return a.detach().cpu().numpy()

    def from_numpy(self, a):
        return self.torch.as_tensor(np.asarray(a), device=self.device)


def rotations(quat, xp):
    """Rotation matrices [..., 3, 3] of unit quaternions [..., 4] (w, x, y, z)."""
    w, x, y, z = quat[..., 0], quat[..., 1], quat[..., 2], quat[..., 3]
    rows = [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]
    return xp.stack(rows, axis=-1).reshape(tuple(quat.shape[:-1]) + (3, 3))


def quaternion_product(a, b):
    """a * b for quaternions [..., 4] (w, x, y, z), NumPy."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def quaternion_of_rotation_vector(v):
    """exp(v / 2) as a unit quaternion [..., 4], NumPy."""
    angle = np.linalg.norm(v, axis=-1, keepdims=True)
    half = 0.5 * angle
    scale = np.where(angle > 1e-12, np.sin(half) / np.where(angle > 1e-12, angle, 1.0), 0.5)
    return np.concatenate([np.cos(half), v * scale], axis=-1)


def cross(a, b, xp):
    """a x b over the last axis [..., 3] (broadcasting)."""
    if xp.name == "torch":
        return xp.torch.linalg.cross(*xp.torch.broadcast_tensors(a, b))  # one operation: each costs microseconds
    return xp.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1], a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


NUMPY = NumpyOps(np.float64)  # float64 NumPy: the host-side conversions (MujocoState.to_lockstep)
