#!/usr/bin/env python3
"""Writes the generated reference scenes of docs/scenes.md into this directory:
chain-7.json, chain-32.json, chain-7-seed.json, free-bushing-grid-4.json, free-bushing-grid-16.json.

They mirror makeChain, makeChain7Seed and makeFreeBushingGrid of include/lockstep/engine/builtin_scenes.h
(the tests check that they build the same models). The robot scenes are written by hand.
Run: python3 scenes/generate.py
"""
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def dump(value, indent=0):
    """JSON with one line per body or element: objects nest, numbers and short lists stay inline."""
    pad = "  " * indent
    if isinstance(value, dict):
        if all(not isinstance(v, (dict, list)) or inline(v) for v in value.values()) and len(str(value)) < 400:
            return "{" + ", ".join(f'"{k}": {dump(v)}' for k, v in value.items()) + "}"
        items = [f'{pad}  "{k}": {dump(v, indent + 1)}' for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if inline(value):
            return "[" + ", ".join(dump(v) for v in value) + "]"
        return "[\n" + ",\n".join(pad + "  " + dump(v, indent + 1) for v in value) + "\n" + pad + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def inline(value):
    if isinstance(value, list):
        return all(isinstance(v, (int, float)) for v in value) or all(inline(v) for v in value) and len(str(value)) < 120
    if isinstance(value, dict):
        return all(inline(v) or not isinstance(v, (dict, list)) for v in value.values()) and len(str(value)) < 400
    return True


def write(name, scene):
    with open(os.path.join(HERE, name), "w") as f:
        f.write(dump(scene) + "\n")


def chain_bodies(n):
    bodies = []
    for i in range(1, n + 1):
        b = {"name": f"link{i}", "parent": "ground" if i == 1 else f"link{i - 1}", "mobilizer": "pin",
             "joint": f"joint{i}"}
        if i > 1:
            b["X_PF"] = {"position": [0, -0.5, 0]}
        b.update({"mass": 1, "com": [0, -0.25, 0], "inertia": {"xx": 0.02, "yy": 0.005, "zz": 0.02}})
        bodies.append(b)
    return bodies


def chain(n):
    return {
        "name": f"chain-{n}",
        "description": f"docs/scenes.md chain-N with N = {n}: links on Pins about z, hanging 0.5 m apart",
        "gravity": [0, -9.81, 0],
        "bodies": chain_bodies(n),
        "initial_state": {"q": [0.3] * n},
        "simulation": {"dt": 1e-3, "steps": 1000, "integrator": "rk4", "worlds": 4096},
    }


def chain7_seed():
    scene = chain(7)
    scene["name"] = "chain-7-seed"
    scene["description"] = ("docs/scenes.md chain-7-seed: chain-7 plus a LinearBushing, a LinearSpringDamper and a "
                            "SphereOnSphereContact between Ground and link 7")
    scene["linear_bushings"] = [{
        "name": "bushing", "body1": "ground", "frame_on_body1": {"position": [0.1, -3.5, 0]},
        "body2": "link7", "frame_on_body2": {"position": [0, -0.5, 0]},
        "stiffness": [10, 10, 10, 100, 100, 100], "damping": [1, 1, 1, 5, 5, 5]}]
    scene["spring_dampers"] = [{
        "name": "spring", "bodyA": "ground", "p_AP": [0.5, 0, 0], "bodyB": "link7", "p_BQ": [0, -0.5, 0],
        "free_length": 0.8, "stiffness": 200, "damping": 2}]
    scene["sphere_contacts"] = [{
        "name": "contact", "bodyF": "ground", "center_on_F": [0.3, -3.55, 0], "radius_on_F": 0.2,
        "bodyB": "link7", "center_on_B": [0, -0.5, 0], "radius_on_B": 0.1, "enforce_rolling": False}]
    # Keys in the order a reader expects them.
    order = ["name", "description", "gravity", "bodies", "linear_bushings", "spring_dampers", "sphere_contacts",
             "initial_state", "simulation"]
    return {k: scene[k] for k in order}


def grid(n):
    # The bodies of bushing case 1 (docs/reference-values.md): mass 1.234, com (.1, .2, .3), inertia
    # about the body origin 1.234 * (xx 1, yy 1.1, zz 1.2, xy .01, xz .02, yz .03); the scene gives it
    # about the com:
    # I_C = I_O - m (|c|^2 1 - c c^T).
    m, c = 1.234, [0.1, 0.2, 0.3]
    about_origin = [m * 1.0, m * 1.1, m * 1.2, m * 0.01, m * 0.02, m * 0.03]
    c2 = sum(x * x for x in c)
    central = [about_origin[0] - m * (c2 - c[0] * c[0]), about_origin[1] - m * (c2 - c[1] * c[1]),
               about_origin[2] - m * (c2 - c[2] * c[2]), about_origin[3] + m * c[0] * c[1],
               about_origin[4] + m * c[0] * c[2], about_origin[5] + m * c[1] * c[2]]
    name = lambda i, j: f"body_{i}_{j}"
    bodies, joints = [], {}
    for j in range(n):
        for i in range(n):
            bodies.append({"name": name(i, j), "parent": "ground", "mobilizer": "free",
                           "X_PF": {"position": [i, j, 0]}, "mass": m, "com": c, "inertia": central})
            # Body k (row-major) turned 0.05 rad about a_k and moved 0.01 m along a_k,
            # a_k = normalize(sin(k + 1), cos(2k + 1), 0.5).
            k = j * n + i
            a = [math.sin(k + 1.0), math.cos(2.0 * k + 1.0), 0.5]
            length = math.sqrt(sum(x * x for x in a))
            a = [x / length for x in a]
            s = math.sin(0.025)
            joints[name(i, j)] = {"q": [math.cos(0.025), s * a[0], s * a[1], s * a[2]] + [0.01 * x for x in a]}
    bushings = []

    def link(a, on_a, b, on_b):
        bushings.append({"name": f"{a}-{b}", "body1": a, "frame_on_body1": {"position": on_a}, "body2": b,
                         "frame_on_body2": {"position": on_b}, "stiffness": [50, 50, 50, 500, 500, 500],
                         "damping": [0.5, 0.5, 0.5, 5, 5, 5]})

    for j in range(n):
        for i in range(n):
            if i + 1 < n:
                link(name(i, j), [0.5, 0, 0], name(i + 1, j), [-0.5, 0, 0])
            if j + 1 < n:
                link(name(i, j), [0, 0.5, 0], name(i, j + 1), [0, -0.5, 0])
    link("ground", [0, 0, 0], name(0, 0), [0, 0, 0])
    return {
        "name": f"free-bushing-grid-{n}",
        "description": (f"docs/scenes.md free-bushing-grid with n = {n}: free bodies 1 m apart joined to their right "
                        "and upper neighbours by LinearBushings, the corner body also to Ground; no gravity"),
        "gravity": [0, 0, 0],
        "bodies": bodies,
        "linear_bushings": bushings,
        "initial_state": {"joints": joints},
        "simulation": {"dt": 1e-3, "steps": 1000, "integrator": "rk4", "worlds": 1024 if n <= 4 else 64},
    }


if __name__ == "__main__":
    write("chain-7.json", chain(7))
    write("chain-32.json", chain(32))
    write("chain-7-seed.json", chain7_seed())
    write("free-bushing-grid-4.json", grid(4))
    write("free-bushing-grid-16.json", grid(16))
