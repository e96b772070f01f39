#!/usr/bin/env python3
"""Writes the structure-aware seeds of fuzz/corpus (issue 16): cyclic and long URDF chains, deep XML
and JSON nesting, wide per_world lists, and study files. Mutating them, the fuzzers reach the shapes
that random bytes never build. Run from the repository root: python3 fuzz/structured_seeds.py"""
import json
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(kind, name, text):
    with open(os.path.join(ROOT, kind, name), "w") as f:
        f.write(text)


def link(name, mass=1.0):
    if mass is None:
        return f'<link name="{name}"/>'
    return (f'<link name="{name}"><inertial><mass value="{mass}"/>'
            f'<inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def joint(name, kind, parent, child):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="0 0 0.1"/><axis xyz="0 0 1"/></joint>')


def robot(body):
    return f'<robot name="r">{body}</robot>\n'


# ---- URDF ----
write("urdf", "two_parents.urdf", robot(link("base") + link("a") + link("b") + joint("j1", "continuous", "base", "a")
                                        + joint("j2", "continuous", "a", "b") + joint("j3", "continuous", "b", "a")))
write("urdf", "diamond.urdf", robot(link("base") + link("a") + link("b") + link("c")
                                    + joint("ja", "continuous", "base", "a") + joint("jb", "fixed", "base", "b")
                                    + joint("jc", "continuous", "a", "c") + joint("jd", "fixed", "b", "c")))
write("urdf", "chain_300.urdf", robot(link("l0") + "".join(
    link(f"l{i}") + joint(f"j{i}", "continuous", f"l{i - 1}", f"l{i}") for i in range(1, 301))))
write("urdf", "fixed_chain_300.urdf", robot(link("l0") + "".join(
    link(f"l{i}", None) + joint(f"j{i}", "fixed", f"l{i - 1}", f"l{i}") for i in range(1, 301))))
write("urdf", "deep_xml.urdf", '<robot name="r">' + link("base") + "<a>" * 150 + "</a>" * 150 + "</robot>\n")
write("urdf", "mesh_only_leaf.urdf", robot(link("base") + link("cam", None) + joint("pan", "continuous", "base", "cam")))
write("urdf", "noise_inertia.urdf", robot(
    link("base") + '<link name="f"><inertial><mass value="1e-6"/><inertia ixx="1e-20" iyy="2e-21" izz="5e-20" '
    'ixy="3e-21" ixz="0" iyz="0"/></inertial></link>' + joint("jf", "continuous", "base", "f")))

# ---- scenes ----
body = {"name": "a", "mobilizer": "pin", "mass": 1, "inertia": [0.1, 0.1, 0.1, 0, 0, 0]}
wide = {"bodies": [body], "per_world": [{"worlds": i, "gravity": [0, 0, -1]} for i in range(1000)]}
write("scene", "wide_per_world.json", json.dumps(wide) + "\n")
write("scene", "deep_arrays.json", '{"name": ' + "[" * 150 + "]" * 150 + "}\n")
write("scene", "deep_objects.json", '{"name": ' + '{"k": ' * 150 + "1" + "}" * 151 + "\n")
write("scene", "late_duplicate.json", json.dumps(wide)[:-2] + ', {"worlds": 1, "worlds": 2}]}\n')
chain = {"bodies": [dict(body, name=f"b{i}", parent=f"b{i - 1}" if i else "ground") for i in range(300)]}
write("scene", "chain_300.json", json.dumps(chain) + "\n")
write("scene", "massless_leaf.json", json.dumps({"bodies": [body, dict(body, name="tip", parent="a", mobilizer="ball",
                                                                       mass=0, inertia=[0] * 6)]}) + "\n")

# ---- studies ----
with open(os.path.join(ROOT, "..", "..", "studies", "chain-7-seed-stiffness.json")) as f:
    write("study", "chain-7-seed-stiffness.json", f.read())
write("study", "builtin_scene.json", json.dumps({"worlds": 8, "steps": 10, "outputs": ["q.joint7", "energy.total"],
                                                 "vary": [{"parameter": "body.link7.mass", "distribution": "uniform",
                                                           "low": 0.5, "high": 1.5}]}) + "\n")
write("study", "scene_with_study.json", json.dumps({
    "bodies": [body], "simulation": {"worlds": 4, "steps": 5},
    "study": {"outputs": ["q.a"], "vary": [{"parameter": "body.a.mass", "distribution": "lognormal", "mu": 0,
                                            "sigma": 0.1}], "quantiles": [0.5], "histogram_bins": 4}}) + "\n")
write("study", "unknown_parameter.json", json.dumps({"outputs": ["q.joint7"], "vary": [
    {"parameter": "body.link9.mass", "distribution": "normal", "mean": 1, "sd": 0.1}]}) + "\n")
write("study", "wide_vary.json", json.dumps({"outputs": ["energy.total"], "vary": [
    {"parameter": "body.link7.mass", "distribution": "uniform", "low": 1, "high": 2} for _ in range(200)]}) + "\n")
write("study", "deep_nesting.json", '{"outputs": ' + "[" * 150 + "]" * 150 + "}\n")
write("study", "scene_path.json", json.dumps({"scene": "../scenes/panda.json", "worlds": 2, "steps": 1,
                                              "outputs": ["energy.total"]}) + "\n")
