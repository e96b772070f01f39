#!/usr/bin/env python3
"""The zero-copy loop with PyTorch: tensors that are the engine's memory.

torch.from_dlpack(batch.q) is a tensor over the batch's own q (no copy, on the CPU backend host
memory, on the CUDA backend device memory); a policy computed in torch writes its actions straight
into batch.tau with copy_(). Here a PD controller brings 4096 chain-7 worlds (gravity switched off
through the per-world parameters), each with its own target, to rest at their targets, and the
script checks that no copy was ever made.
Without torch installed it runs the same loop on NumPy's from_dlpack, and says so.

    .venv/bin/python examples/torch_zero_copy.py [--device cpu|cuda|auto]
"""
import argparse
import os

import numpy as np

import lockstep

try:
    import torch
    from_dlpack, framework = torch.from_dlpack, f"torch {torch.__version__}"
except ImportError:
    torch = None
    from_dlpack, framework = np.from_dlpack, "NumPy (torch is not installed)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda", "auto"])
    ap.add_argument("--worlds", type=int, default=4096)
    args = ap.parse_args()
    if torch is None and args.device != "cpu":
        raise SystemExit("--device cuda needs torch (NumPy arrays live in host memory)")

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    model = lockstep.load(os.path.join(root, "scenes", "chain-7.json"))
    batch = lockstep.Batch(model, args.worlds, device=args.device, dtype="float32")
    batch.params["gravity.y"] = 0.0
    # The slow mode, the whole chain turning on joint 1 (about 29 kg m^2), is damped by joint 1's
    # viscous damping inside the integrator: a damping term in the actions, held over a step, would
    # have to stay below about 2 * (smallest mass-matrix eigenvalue) / dt to be stable.
    batch.params["damping.joint1"] = 60.0
    q, u, tau = from_dlpack(batch.q), from_dlpack(batch.u), from_dlpack(batch.tau)
    print(f"{framework}: q, u, tau of {args.worlds} worlds on {batch.backend}, shape {tuple(q.shape)}, "
          f"strides {tuple(q.stride()) if torch else tuple(s // 4 for s in q.strides)} (elements)")

    # Each world's target: the initial pose turned by its own angle on the first joint.
    target = q * 1.0                                       # a copy, in the framework
    target[:, 0] += (np.linspace(-0.5, 0.5, args.worlds) if torch is None
                     else torch.linspace(-0.5, 0.5, args.worlds, device=q.device))
    kp, kd = 50.0, 5.0
    for k in range(6001):
        tau.copy_(kp * (target - q) - kd * u) if torch else np.copyto(tau, kp * (target - q) - kd * u)
        batch.step()
        if k % 1500 == 0:
            err = float(abs(target - q).max())
            print(f"step {k:5d}   t = {k * model.dt:4.2f} s   max |q - target| = {err:.4f} rad")

    # The views never moved: the engine wrote q in place and read the actions from tau.
    same = (q.data_ptr() if torch else q.__array_interface__["data"][0]) == \
        (from_dlpack(batch.q).data_ptr() if torch else batch.q.__array_interface__["data"][0])
    print("zero copy:", "the tensors are the batch's memory" if same else "NOT the same memory")


if __name__ == "__main__":
    main()
