"""A Lockstep step as a differentiable PyTorch function (docs/derivatives.md).

    from lockstep.autograd import step
    q1, u1 = step(batch, q, u, tau)                       # every world, one step
    q1, u1 = step(batch, q, u, tau, params=("gravity.z",), p=p)   # p: (worlds, len(params))

The forward pass puts (q, u, tau and the named parameters) into every world of the batch, takes one
step and returns the next q and u as new tensors; the backward pass uses the exact Jacobians of that
step (Batch.linearize: A, B and C of every world), so that a rollout through Lockstep can be
differentiated by torch. q is in the model's coordinates (quaternions included): the Jacobians are
taken in the tangent space and mapped to the coordinates at either end (a quaternion's coordinates
by the exponential map at the unit quaternion, so that a gradient along q itself, which the step's
normalization ignores, is zero). The batch should hold float64 worlds; its state is overwritten.
"""
from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import torch

__all__ = ["step", "Step", "tangent_to_coordinates", "coordinates_to_tangent"]


def tangent_to_coordinates(model, q: np.ndarray) -> np.ndarray:
    """dq / d(tangent) at configurations q (worlds, nq): shape (worlds, nq, nu). The identity where a
    coordinate's rate is its speed; for a quaternion (w, v) the columns 1/2 (0, e_i) * q."""
    worlds = q.shape[0]
    P = np.zeros((worlds, model.nq, model.nu))
    # The coordinates outside quaternions go with the speeds outside their angular speeds, in order
    # (a Free's translation too: its rate is its linear speed).
    in_quaternion = {k for qo, _ in model.quaternions for k in range(qo, qo + 4)}
    angular = {k for _, uo in model.quaternions for k in range(uo, uo + 3)}
    coords = [k for k in range(model.nq) if k not in in_quaternion]
    speeds = [k for k in range(model.nu) if k not in angular]
    for qi, ui in zip(coords, speeds):
        P[:, qi, ui] = 1.0
    for qo, uo in model.quaternions:
        w, x, y, z = (q[:, qo + j] for j in range(4))
        # 1/2 (0, e) * (w, v) = 1/2 (-e.v, w e + e x v)
        P[:, qo, uo:uo + 3] = -0.5 * np.stack([x, y, z], axis=1)
        P[:, qo + 1, uo:uo + 3] = 0.5 * np.stack([w, z, -y], axis=1)
        P[:, qo + 2, uo:uo + 3] = 0.5 * np.stack([-z, w, x], axis=1)
        P[:, qo + 3, uo:uo + 3] = 0.5 * np.stack([y, -x, w], axis=1)
    return P


def coordinates_to_tangent(model, q: np.ndarray) -> np.ndarray:
    """d(tangent) / dq at unit configurations q: shape (worlds, nu, nq), a left inverse of
    tangent_to_coordinates (for a quaternion the rows 2 (-v, w I + [v]x))."""
    P = tangent_to_coordinates(model, q)
    T = np.transpose(P, (0, 2, 1)).copy()
    for qo, uo in model.quaternions:
        T[:, uo:uo + 3, qo:qo + 4] *= 4.0  # (1/2 E)^T (1/2 E) = 1/4 I for a unit quaternion
    return T


class Step(torch.autograd.Function):
    """(q, u, tau, p) -> (q+, u+) for every world; see the module's documentation."""

    @staticmethod
    def forward(ctx, q, u, tau, p, batch, params: Sequence[str], dt: Optional[float], integrator: Optional[str]):
        model = batch.model
        qn = q.detach().cpu().numpy().astype(np.float64)
        batch.set_state(qn, u.detach().cpu().numpy())
        batch.field("tau")[:] = tau.detach().cpu().numpy()
        if p is not None:
            pn = p.detach().cpu().numpy()
            for j, name in enumerate(params):
                batch.params[name] = pn[:, j]
        A, B, C = batch.linearize(params, dt=dt, integrator=integrator)
        batch.step(1, dt=dt, integrator=integrator)
        q1 = np.array(batch.field("q"), dtype=np.float64)
        u1 = np.array(batch.field("u"), dtype=np.float64)
        ctx.nu = model.nu
        ctx.has_p = p is not None
        ctx.save_for_backward(*(torch.from_numpy(np.ascontiguousarray(x, dtype=np.float64)) for x in (
            A, B, C, coordinates_to_tangent(model, qn), tangent_to_coordinates(model, q1))))
        return (torch.from_numpy(q1).to(q.dtype).to(q.device), torch.from_numpy(u1).to(u.dtype).to(u.device))

    @staticmethod
    def backward(ctx, gq1, gu1):
        A, B, C, into_tangent, out_of_tangent = ctx.saved_tensors
        nu = ctx.nu
        # The output gradient in the tangent space: dq+/d(tangent)^T gq+, then gu+.
        g = torch.cat([torch.einsum("wqk,wq->wk", out_of_tangent, gq1.double().cpu()), gu1.double().cpu()], dim=1)
        gx = torch.einsum("wrk,wr->wk", A, g)
        gq = torch.einsum("wkq,wk->wq", into_tangent, gx[:, :nu])
        gu = gx[:, nu:]
        gtau = torch.einsum("wrk,wr->wk", B, g)
        gp = torch.einsum("wrk,wr->wk", C, g) if ctx.has_p else None
        dev, dt = gq1.device, gq1.dtype
        return (gq.to(dt).to(dev), gu.to(dt).to(dev), gtau.to(dt).to(dev),
                None if gp is None else gp.to(dt).to(dev), None, None, None, None)


def step(batch, q, u, tau, params: Sequence[str] = (), p=None, dt: Optional[float] = None,
         integrator: Optional[str] = None):
    """One differentiable step of every world: (q+, u+) from q (worlds, nq), u (worlds, nu), tau
    (worlds, nu) and, when params are named, p (worlds, len(params))."""
    if batch.device != "cpu":
        raise ValueError("lockstep.autograd.step: the batch must be on the CPU (lockstep.Batch(..., device=\"cpu\")): "
                         "its state and actions are written from host arrays")
    params = tuple(params)
    if (p is None) != (len(params) == 0):
        raise ValueError("step: give p (worlds, len(params)) exactly when params are named")
    for name, t in (("q", q), ("u", u), ("tau", tau), ("p", p)):
        if t is None:
            continue
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"step: {name} must be a torch tensor, not {type(t).__name__}")
        if not t.dtype.is_floating_point:
            # The results take the inputs' dtype: an integer tensor would truncate them.
            raise TypeError(f"step: {name} must be a floating-point tensor (torch.float64 for exact gradients), "
                            f"not {t.dtype}")
    return Step.apply(q, u, tau, p, batch, params, dt, integrator)
