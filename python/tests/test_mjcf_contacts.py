"""MJCF contact and limit attributes under MuJoCo's contact law (contact_law "mujoco") against PyPI's
MuJoCo (its Newton solver to convergence): a free body with a geom of each shape, dropped within a
few millimetres of a floor at random poses, and hinges and slides beyond their ranges, comparing
udot with qacc, every contact point (dist, position, normal, force in the contact frame) with
MuJoCo's contacts and mj_contactForce, softLimitForce with MuJoCo's limit rows, every sensor and
mujocoBody. Each feature names changes of its attributes; each, made on MuJoCo's side only, must make
a comparison fail. Then the compliant law's contact spheres and stops against MuJoCo's geoms and
ranges, touch zones, and one step at the file's timestep and integrator against mj_step."""
import re

import numpy as np
import pytest

import test_mjcf_features as F
from mujoco_twin import (Twin, change, change_id, changes_of, check_equal, check_noticed, mujoco, mutate, with_sensors,
                         worst_errors)

TOLERANCE = 1e-8  # of max(1, the largest value): the solves converge to 1e-11 of the forces' scale
STATES = 12


def scene(shape, geom="", floor="", option="", flags="", children="", world="", timestep=".004", sensors=""):
    """A free body carrying one geom (`shape`: type and size; `geom`: more attributes) and `children`,
    above a floor (`floor`: its attributes) or a plane placed in `world`; every sensor, and `sensors`."""
    floor_geom = "" if world else f'<geom name="floor" type="plane" size="5 5 .1" {floor}/>'
    return with_sensors(f"""<mujoco model="contact">
  <compiler angle="radian"/>
  <option timestep="{timestep}" gravity=".3 -.2 -9.81" {option}>{flags}</option>
  <worldbody>
    {floor_geom}{world}
    <body name="body" pos="0 0 .5">
      <joint name="root" type="free"/>
      <geom name="shape" {shape} mass="1.5" {geom}/>
      <site name="body_site" pos=".01 .02 -.03" euler=".2 .1 0"/>
      {children}
    </body>
  </worldbody>
</mujoco>""", sensors)


SPHERE, CAPSULE = 'type="sphere" size=".1"', 'type="capsule" size=".05 .15" euler=".3 .2 0"'
BOX, CYLINDER = 'type="box" size=".1 .15 .05"', 'type="cylinder" size=".08 .1" euler="0 .4 .1"'
ELLIPSOID = 'type="ellipsoid" size=".12 .07 .05" euler=".3 .2 .1"'
# A welded child at a rotated and offset frame, whose own welded child carries a capsule that
# touches the floor: MuJoCo's contacts are on the grandchild, Lockstep's on the free body.
WELDED = """
      <body name="arm" pos=".12 .05 -.02" euler=".4 -.3 .8">
        <geom name="arm_geom" type="box" size=".03 .02 .05" pos=".02 0 .01" euler="0 .2 0" mass=".2"/>
        <body name="foot" pos=".05 -.03 -.06" quat=".8 .3 -.4 .2">
          <geom name="foot_geom" type="capsule" fromto="0 0 0 .08 .02 -.03" size=".025" mass=".1" friction="1.4"/>
          <site name="foot_site" pos=".04 .01 -.015"/>
        </body>
      </body>"""
# A hinge and a slide with ranges, margins and their own solref and solimp.
LIMITED = """
      <body name="flap" pos=".15 0 .1" euler=".3 0 .2">
        <joint name="flap_hinge" type="hinge" axis="0 1 .2" limited="true" range="-.4 .6" margin=".02"
            solreflimit=".03 .8" solimplimit=".8 .95 .2 .4 3"/>
        <geom name="flap_geom" type="box" size=".1 .02 .01" pos=".1 0 0" mass=".3" contype="0" conaffinity="0"/>
        <site name="flap_site" pos=".05 .01 0" euler="0 0 .4"/>
        <body name="slider" pos=".2 0 0">
          <joint name="slider_joint" type="slide" axis="1 .2 0" limited="true" range="-.05 .08" margin=".01"/>
          <geom name="slider_geom" type="sphere" size=".02" mass=".1" contype="0" conaffinity="0"/>
        </body>
      </body>"""

GHOST = '<geom name="ghost" type="box" size=".2 .2 .01" pos="0 0 -.12" contype="4" conaffinity="4"/>'
RAMP = ('<body name="ramp" pos="0 .1 -.2" euler=".15 0 .3"><geom name="floor" type="plane" size="3 3 .1" '
        'pos=".1 0 .05" euler="0 .1 0" friction=".7"/></body>')

# id -> (xml, the attributes to change on MuJoCo's side only: mujoco_twin.change's specs).
FEATURES = {
    "sphere_friction_max": (scene(SPHERE, 'friction="1.2"', 'friction=".5"'), ['friction="1.2"']),
    "capsule_ends": (scene(CAPSULE, 'friction=".8"'), ['size=".05 .15"']),
    "box_corners": (scene(BOX, 'friction=".6"', 'friction=".9"'), ['friction=".9"']),
    "cylinder_rim": (scene(CYLINDER), ['size=".08 .1"']),
    "ellipsoid_support_point": (scene(ELLIPSOID, 'friction=".8"', 'margin=".003"'),
                                ['size=".12 .07 .05"', 'euler=".3 .2 .1"', 'margin=".003"']),
    "condim_1_frictionless": (scene(BOX, 'condim="1"', 'condim="1" friction="1.2"'),
                              [('condim="1" friction', 'condim="3" friction')]),
    "solref_solimp_mixed_by_solmix": (
        scene(CAPSULE, 'solref=".015 .7" solimp=".8 .9 .002 .3 3" solmix="3"', 'solref=".03 1.2" solmix=".5"'),
        ['solref=".015 .7"', ('solimp=".8 .9 .002 .3 3"', 'solimp=".8 .9 .003 .3 3"'), 'solmix="3"']),
    "solref_direct_stiffness_damping": (  # the smaller of each
        scene(SPHERE, 'solref="-4000 -40"', 'solref="-6000 -30"'),
        [('solref="-4000 -40"', 'solref="-4000 -45"'), ('solref="-6000 -30"', 'solref="-5000 -30"')]),
    "margin_summed": (scene(BOX, 'margin=".004"', 'margin=".002"'), ['margin=".004"']),
    "priority_picks_the_geoms_parameters": (
        scene(CYLINDER, 'priority="1" friction=".4" solref=".01 .9"', 'friction="1.3" condim="1"'),
        ['friction=".4"', ('priority="1"', 'priority="0"')]),
    "contype_conaffinity": (scene(SPHERE, 'contype="2" conaffinity="2"', 'contype="3" conaffinity="1"', children=GHOST),
                            [('contype="4" conaffinity="4"', 'contype="4" conaffinity="1"'),
                             ('contype="3"', 'contype="1"')]),
    "tilted_floor_pos_quat": (scene(BOX, floor='pos=".2 -.1 -.3" quat=".95 .2 -.1 .05"'), ['quat=".95 .2 -.1 .05"']),
    "plane_on_a_static_body": (scene(CAPSULE, world=RAMP), ['euler=".15 0 .3"', ('euler="0 .1 0"', 'euler="0 .15 0"')]),
    "welded_children_touch_the_floor": (scene(BOX, children=WELDED), ['quat=".8 .3 -.4 .2"', 'friction="1.4"']),
    "impratio": (scene(BOX, 'friction="1.1"', option='impratio="3"'), ['impratio="3"']),
    # MuJoCo's elliptic cones: each point's normal and tangents one cone, impratio scaling its tangents.
    "elliptic_cone": (scene(BOX, 'friction="1.1"', 'friction=".6"', option='cone="elliptic" impratio="3"'),
                      [('cone="elliptic"', 'cone="pyramidal"'), 'impratio="3"', 'friction="1.1"']),
    # friction="0" on both geoms: MuJoCo's mjMINMU (1e-5) in the cone.
    "elliptic_cone_without_friction": (scene(CAPSULE, 'friction="0"', 'friction="0"', option='cone="elliptic"'),
                                       [('cone="elliptic"', 'cone="pyramidal"'),
                                        ('size="5 5 .1" friction="0"', 'size="5 5 .1" friction=".01"')]),
    # A cone beside a frictionless point (the floor's condim 1, the capsule's 3: MuJoCo takes the larger).
    "elliptic_cone_beside_a_frictionless_point": (
        scene(CAPSULE, floor='condim="1"', children=WELDED.replace('friction="1.4"', 'friction="1.4" condim="1"'),
              option='cone="elliptic"'),
        [('cone="elliptic"', 'cone="pyramidal"'), ('friction="1.4" condim="1"', 'friction="1.4" condim="3"')]),
    # Torsional (condim 4) and rolling (condim 6) friction: a pyramid's extra edges, a cone's extra rows, each
    # coefficient the larger of the two geoms'.
    "condim_4_torsional": (scene(BOX, 'condim="4" friction="1 .05 .001"', 'friction=".8 .02 .001"'),
                           [('condim="4"', 'condim="3"'), ('friction="1 .05 .001"', 'friction="1 .03 .001"')]),
    "condim_6_rolling": (scene(SPHERE, 'condim="6" friction=".9 .02 .01"'),
                         [('condim="6"', 'condim="4"'), ('friction=".9 .02 .01"', 'friction=".9 .02 .02"')]),
    "condim_6_elliptic_cone": (
        scene(CAPSULE, 'condim="6" friction="1.1 .03 .02"', option='cone="elliptic" impratio="2"'),
        [('condim="6"', 'condim="3"'), ('friction="1.1 .03 .02"', 'friction="1.1 .03 .005"'), 'impratio="2"']),
    "condim_4_elliptic_cone_from_the_floor": (
        scene(BOX, 'friction=".7 .04 .001"', 'condim="4"', option='cone="elliptic"'),
        [('condim="4"', 'condim="3"'), ('friction=".7 .04 .001"', 'friction=".7 .01 .001"')]),
    "timestep_bounds_the_time_constant": (scene(SPHERE, 'solref=".005 1"', timestep=".01"), ['timestep=".01"']),
    "joint_limits_range_margin_solref_solimp": (
        scene(SPHERE, children=LIMITED),
        ['range="-.4 .6"', 'margin=".02"', 'solreflimit=".03 .8"', 'range="-.05 .08"',
         ('solimplimit=".8 .95 .2 .4 3"', 'solimplimit=".6 .95 .2 .4 3"')]),
    "flag_contact_disabled": (scene(BOX, children=LIMITED, flags='<flag contact="disable"/>'), ['contact="disable"']),
    "flag_limit_disabled": (scene(BOX, children=LIMITED, flags='<flag limit="disable"/>'), ['limit="disable"']),
    "flag_frictionloss_disabled": (
        scene(BOX, children=LIMITED.replace('margin=".02"', 'margin=".02" frictionloss=".3"'),
              flags='<flag frictionloss="disable"/>'),
        ['frictionloss="disable"']),
    "flag_constraint_disabled": (scene(BOX, children=LIMITED, flags='<flag constraint="disable"/>'),
                                 ['constraint="disable"']),
}


# Not compared: MuJoCo gives a static body that carries the plane (not the world body) the reaction
# of its contacts in cfrc_ext; Lockstep's static bodies hold none (docs/mjcf.md).
SKIP = {"plane_on_a_static_body": ("cfrc_ext",)}


@pytest.mark.parametrize("feature", FEATURES)
def test_mjcf_contact_feature_equals_mujoco(feature, tmp_path):
    twin = Twin(tmp_path, FEATURES[feature][0], law="mujoco")
    assert not twin.model.warnings, twin.model.warnings
    _, constrained = check_equal(feature, twin, TOLERANCE, STATES, skip=SKIP.get(feature, ()), contact=True,
                                 beyond_range=0.2)
    if "disabled" not in feature:
        assert constrained >= STATES // 2, f"{feature}: constraints in only {constrained} states"


@pytest.mark.parametrize("feature,change", changes_of(FEATURES), ids=change_id)
def test_mjcf_contact_feature_change_on_mujocos_side_is_noticed(feature, change, tmp_path):
    xml = FEATURES[feature][0]
    twin = Twin(tmp_path, xml, law="mujoco", mujoco_xml=mutate(xml, *change))
    check_noticed(feature, change, twin, TOLERANCE, STATES, contact=True, beyond_range=0.2)


# --- the compliant law's contact spheres (docs/mjcf.md, "Contact with the ground") ---

def expected_spheres(m, d, g):
    """The contact spheres (centres in Ground, radius) the compliant law puts on geom g: a sphere
    itself, a capsule's end spheres, a box's corners and a cylinder's two rims of eight (radius 0.1 of
    the smallest half-size, inset)."""
    c, R, s = d.geom_xpos[g], d.geom_xmat[g].reshape(3, 3), m.geom_size[g]
    kind = m.geom_type[g]
    if kind == mujoco.mjtGeom.mjGEOM_SPHERE:
        return [c], s[0]
    if kind == mujoco.mjtGeom.mjGEOM_CAPSULE:
        return [c + e * s[1] * R[:, 2] for e in (-1, 1)], s[0]
    if kind == mujoco.mjtGeom.mjGEOM_BOX:
        r = 0.1 * s.min()
        return [c + R @ ((2 * np.array(corner) - 1) * (s - r)) for corner in np.ndindex(2, 2, 2)], r
    r = 0.1 * min(s[0], s[1])  # cylinder
    return [c + R @ np.array([(s[0] - r) * np.cos(a), (s[0] - r) * np.sin(a), e * (s[1] - r)])
            for e in (-1, 1) for a in np.arange(8) * np.pi / 4], r


def mixed_friction(m, g, plane):
    """MuJoCo's friction of a contact between g and the plane (mj_contactParam): the higher
    priority's, else the larger; none with condim 1."""
    p1, p2 = m.geom_priority[g], m.geom_priority[plane]
    pick = (lambda key: key[g] if p1 > p2 else key[plane]) if p1 != p2 else None
    condim = pick(m.geom_condim) if pick else max(m.geom_condim[g], m.geom_condim[plane])
    friction = pick(m.geom_friction[:, 0]) if pick else max(m.geom_friction[g, 0], m.geom_friction[plane, 0])
    return 0.0 if condim == 1 else friction


def compliant_sphere_errors(twin):
    """Per geom that may touch the plane: the largest distance between Lockstep's contact sphere
    centres (in Ground) and the expected ones, and the differences of radius, friction and plane."""
    m, d, params = twin.m, twin.d, twin.batch.params
    plane = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE][0]
    carrier = {i: b["body"] for i, b in enumerate(twin.layout["bodies"])}
    pose = dict(zip(twin.model.field_components("bodyPose"), np.array(twin.batch.bodyPose[0])))
    ours = {}
    for name in twin.model.parameter_names:
        if name.startswith("ground.") and name.endswith(".radius"):
            ours.setdefault(name.split(".")[1], []).append(name[:-len(".radius")])
    errors = {}
    for g in range(m.ngeom):
        if m.body_weldid[m.geom_bodyid[g]] == 0 or not (m.geom_contype[g] & m.geom_conaffinity[plane]
                                                        or m.geom_contype[plane] & m.geom_conaffinity[g]):
            continue
        geom = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g)
        elements = ours.pop(geom, [])
        centres, radius = expected_spheres(m, d, g)
        if len(elements) != len(centres):
            errors[geom] = np.inf
            continue
        b = carrier[m.geom_bodyid[g]]
        p, q = np.array([pose[f"body.{b}.{a}"] for a in "xyz"]), np.array([pose[f"body.{b}.q{a}"] for a in "wxyz"])
        R = np.zeros(9)
        mujoco.mju_quat2Mat(R, q)
        mine = [p + R.reshape(3, 3) @ np.array([params[f"{e}.center.{a}"][0] for a in "xyz"]) for e in elements]
        normal = d.geom_xmat[plane].reshape(3, 3)[:, 2]
        errors[geom] = max(
            max(min(np.linalg.norm(x - y) for y in centres) for x in mine),
            max(abs(params[f"{e}.radius"][0] - radius) for e in elements),
            max(abs(params[f"{e}.{k}_friction"][0] - mixed_friction(m, g, plane)) for e in elements
                for k in ("static", "dynamic")),
            max(np.abs(np.array([params[f"{e}.normal.{a}"][0] for a in "xyz"]) - normal).max() for e in elements),
            max(abs((np.array([params[f"{e}.point.{a}"][0] for a in "xyz"]) - d.geom_xpos[plane]) @ normal)
                for e in elements))
    errors.update({geom: np.inf for geom in ours})  # spheres on a geom MuJoCo would not let touch
    return errors


COMPLIANT = ["sphere_friction_max", "capsule_ends", "box_corners", "cylinder_rim", "contype_conaffinity",
             "tilted_floor_pos_quat", "plane_on_a_static_body", "welded_children_touch_the_floor"]
COMPLIANT_NOT_YET = {
    "condim_1_frictionless": "the compliant law's friction ignores condim 1 (MuJoCo: frictionless)",
    "priority_picks_the_geoms_parameters":
        "the compliant law's friction ignores priority (MuJoCo: the higher priority's)",
}


@pytest.mark.parametrize("feature", COMPLIANT + [pytest.param(f, marks=pytest.mark.xfail(strict=True, reason=r))
                                                 for f, r in COMPLIANT_NOT_YET.items()])
def test_compliant_contact_spheres_sit_on_mujocos_geoms(feature, tmp_path):
    twin = Twin(tmp_path, FEATURES[feature][0])
    twin.set_state(*twin.random_state(np.random.default_rng(3)))
    errors = compliant_sphere_errors(twin)
    assert errors and max(errors.values()) < 1e-12, errors


@pytest.mark.parametrize("feature,change", [(f, c) for f, c in changes_of(FEATURES) if f in COMPLIANT and
                                            re.match("size|friction|quat|euler|contype", c[0])],
                         ids=change_id)
def test_compliant_contact_spheres_notice_a_change_on_mujocos_side(feature, change, tmp_path):
    xml = FEATURES[feature][0]
    twin = Twin(tmp_path, xml, mujoco_xml=mutate(xml, *change))
    twin.set_state(*twin.random_state(np.random.default_rng(3)))
    assert max(compliant_sphere_errors(twin).values()) > 1e-6


@pytest.mark.parametrize("law", ["compliant", "mujoco"])
def test_torsional_and_rolling_friction_under_the_compliant_law_are_named_in_a_warning(law, tmp_path):
    """The compliant law's contact spheres have neither: a geom whose contact with the floor has
    condim 4 or 6 is named; under MuJoCo's law there is nothing to say."""
    twin = Twin(tmp_path, FEATURES["condim_4_torsional"][0], law=law)
    warned = [w for w in twin.model.warnings if "torsional and rolling friction" in w]
    assert len(warned) == (law == "compliant") and all(w.endswith(": shape") for w in warned), twin.model.warnings


# --- the compliant law's joint stops: at MuJoCo's ranges, none with limit="disable" ---

STOPS = {"joint_limits_range_margin_solref_solimp": 'range="-.4 .6"', "flag_limit_disabled": 'limit="disable"'}


@pytest.mark.parametrize("feature,change", [(f, c) for f, spec in STOPS.items() for c in (None, change(spec))])
def test_compliant_stops_sit_at_mujocos_ranges(feature, change, tmp_path):
    """Each limited hinge or slide has a stop at its range (MuJoCo's compiled jnt_range), and no
    speed has one with the limit flag off; a change on MuJoCo's side alone must be noticed."""
    xml = FEATURES[feature][0]
    params = Twin(tmp_path, xml).batch.params
    m = mujoco.MjModel.from_xml_string(mutate(xml, *change) if change else xml)
    ours = {n.split(".", 1)[1][:-len(".lower")]: (params[n][0], params[n.replace(".lower", ".upper")][0])
            for n in params if n.startswith("stop.") and n.endswith(".lower")}
    ours = {k: v for k, v in ours.items() if np.all(np.isfinite(v))}
    theirs = {} if m.opt.disableflags & mujoco.mjtDisableBit.mjDSBL_LIMIT else {
        mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j): tuple(m.jnt_range[j])
        for j in np.flatnonzero(m.jnt_limited)}
    assert (ours == theirs) != bool(change), (ours, theirs)


# --- MuJoCo's law: the acceleration sensors, cfrc_ext, gap and touch zones ---

def test_soft_law_acceleration_sensors_equal_mujocos(tmp_path):
    twin = Twin(tmp_path, FEATURES["joint_limits_range_margin_solref_solimp"][0], law="mujoco")
    worst, _ = worst_errors(twin, np.random.default_rng(11), STATES, contact=True, beyond_range=0.2)
    assert worst["acceleration sensors"] <= TOLERANCE, worst


def test_soft_law_cfrc_ext_equals_mujocos(tmp_path):
    twin = Twin(tmp_path, FEATURES["welded_children_touch_the_floor"][0], law="mujoco")
    worst, _ = worst_errors(twin, np.random.default_rng(11), STATES, contact=True)
    assert worst["cfrc_ext"] <= TOLERANCE, worst


def test_soft_law_gap_is_mujocos(tmp_path):
    twin = Twin(tmp_path, scene(BOX, 'margin=".004" gap=".002"', 'margin=".002"'), law="mujoco")
    check_equal("gap", twin, TOLERANCE, STATES, contact=True)


# A long capsule carrying touch sites of every zone shape around its ends, rotated and offset: the
# contacts of an end fall inside some zones, outside others and near their boundaries.
ZONES = {
    "sphere": 'pos=".2 0 0" size=".045"',
    "capsule": 'pos=".17 .01 -.01" euler="0 1.5 .2" size=".03 .05"',
    "cylinder": 'pos="-.2 0 -.02" euler=".3 0 0" size=".05 .03"',
    "ellipsoid": 'pos="-.18 .01 0" euler="0 .4 .2" size=".06 .05 .045"',
    "box": 'pos=".21 0 -.02" euler=".2 .3 .4" size=".04 .05 .03"',
}
TOUCH = scene('type="capsule" fromto="-.2 0 0 .2 0 0" size=".04"',
              children="".join(f'<site name="zone_{k}" type="{k}" {v}/>' for k, v in ZONES.items()),
              sensors="".join(f'<touch name="touch_{k}" site="zone_{k}"/>' for k in ZONES))


@pytest.mark.parametrize("zone", ZONES)
def test_soft_law_touch_zone_equals_mujocos(zone, tmp_path):
    twin = Twin(tmp_path, TOUCH, law="mujoco")
    sensor = twin.m.sensor(f"touch_{zone}")
    rng, touched = np.random.default_rng(5), 0
    for _ in range(3 * STATES):
        twin.set_state(*twin.random_state(rng, contact=True))
        ours, theirs = twin.batch.sensors[0][sensor.adr[0]], twin.d.sensordata[sensor.adr[0]]
        touched += theirs > 0
        assert ours == pytest.approx(theirs, rel=TOLERANCE, abs=TOLERANCE)
    assert touched > 0


# A ball (radius 0.1) upright on the floor under the compliant law, MuJoCo's contacts on: whether a
# touch sensor counts the ball's contact. The zone "around" holds the contact point; "below", a small
# sphere under the ball, and "below_a_capsules_end" hold only the ray from the contact point along the
# normal, away from the ball.
BALL_ZONES = {"around": 'type="sphere" pos=".02 0 -.03" size=".12"',
              "below": 'type="sphere" pos=".005 0 -.13" size=".02"',
              # A capsule along x under the ball, which the ray meets in its -x end cap alone.
              "below_a_capsules_end": 'type="capsule" pos=".065 0 -.15" euler="0 1.5707963 0" size=".03 .05"'}


@pytest.mark.parametrize("zone", BALL_ZONES)
def test_touch_counts_the_contacts_mujoco_counts(zone, tmp_path):
    twin = Twin(tmp_path, scene(SPHERE, children=f'<site name="zone" {BALL_ZONES[zone]}/>',
                                sensors='<touch name="touch" site="zone"/>'))
    twin.m.opt.disableflags = 0  # MuJoCo's own contacts decide what its sensor counts
    adr, rng = twin.m.sensor("touch").adr[0], np.random.default_rng(2)
    for _ in range(STATES):
        qpos = np.concatenate([rng.uniform(-1, 1, 2), [0.1 - rng.uniform(0.001, 0.004)], [1, 0, 0, 0]])
        twin.set_state(qpos, rng.uniform(-0.1, 0.1, 6), np.zeros(0))
        ours, theirs = twin.batch.sensors[0][adr], twin.d.sensordata[adr]
        assert theirs > 0 and (ours > 0) == (theirs > 0), (ours, theirs)


# --- timestep and integrator: one step of the XML's integrator at its timestep equals mj_step ---

PLANAR_BOX = """<mujoco><option integrator="RK4" timestep="0.003" gravity=".2 0 -9.81"/><worldbody>
  <geom name="floor" type="plane" size="5 5 .1" friction="1.3"/>
  <body name="b" pos="0 0 .1"><joint name="x" type="slide" axis="1 0 0"/><joint name="z" type="slide" axis="0 0 1"/>
    <joint name="pitch" type="hinge" axis="0 1 0"/>
    <geom name="box" type="box" size=".1 .15 .05" euler=".3 .2 .1"/></body>
</worldbody></mujoco>"""

def on_the_floor(twin, rng):
    return twin.random_state(rng, contact=True)


def planar_box_on_the_floor(twin, rng):
    """PLANAR_BOX with its lowest corner 4 mm into to 1 mm above the floor (z is its second slide)."""
    qpos, qvel, ctrl = twin.random_state(rng)
    twin.d.qpos[:] = qpos
    mujoco.mj_kinematics(twin.m, twin.d)
    qpos[1] -= twin.support(1, np.array([0, 0, 1.0])) - rng.uniform(-0.004, 0.001)
    return qpos, qvel, ctrl


# case -> (xml, its states)
STEPS = {
    "euler_hinges": (F.model(F.arm()), Twin.random_state),
    # Servos with kv in MuJoCo 4.0's Euler: its implicit damping is the joints' (a servo's kv stays in
    # the bias force, explicit, as in Lockstep's).
    "euler_servos_with_kv": (F.model(F.arm(shoulder='type="hinge" damping=".2"'),
                                     '<general joint="shoulder" gainprm="9" biastype="affine" biasprm="0 -9 -1.3" '
                                     'gear="2.2"/><velocity joint="elbow" kv="3" gear="-1.6"/>'), Twin.random_state),
    "rk4_hinges": (F.model(F.arm(shoulder='type="hinge" damping=".5"'), option='integrator="RK4"'), Twin.random_state),
    "rk4_hinges_and_slides_with_contacts": (PLANAR_BOX, planar_box_on_the_floor),
    "rk4_ball": (F.model(F.arm(elbow='type="ball"'), option='integrator="RK4"'), Twin.random_state),
    "rk4_free_with_contacts": (scene(BOX, children=LIMITED, option='integrator="RK4"'), on_the_floor),
    "rk4_free_with_elliptic_cones": (scene(BOX, children=LIMITED, option='integrator="RK4" cone="elliptic" impratio="2"'),
                                     on_the_floor),
    "euler_elliptic_cones": (scene(CAPSULE, 'friction=".9"', option='cone="elliptic" impratio="5"'), on_the_floor),
}
# An elliptic cone's cost is not piecewise quadratic, so Newton's method does not end exactly where
# the active set is right, as it does with pyramids: each solve stops at its tolerance (a gradient below
# 1e-11 of the forces' scale), which leaves about 5e-12 after a step (measured: 6.4e-12 and 5.0e-12).
STEP_TOLERANCE = {"rk4_free_with_elliptic_cones": 1e-10, "euler_elliptic_cones": 1e-10}


@pytest.mark.parametrize("case", STEPS)
def test_one_step_at_the_files_timestep_equals_mj_step(case, tmp_path):
    xml, state = STEPS[case]
    twin = Twin(tmp_path, xml, law="mujoco")
    assert twin.model.dt == twin.m.opt.timestep
    assert twin.model.integrator == ("rk4" if twin.m.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4 else "euler")
    rng, worst = np.random.default_rng(4), 0.0
    for _ in range(6):
        twin.set_state(*state(twin, rng))
        twin.batch.step(1)
        mujoco.mj_step(twin.m, twin.d)
        qvel_scale = max(1.0, np.abs(twin.d.qvel).max())
        worst = max(worst, np.abs(twin.batch.mujocoQpos[0] - twin.d.qpos).max(),
                    np.abs(twin.batch.mujocoQvel[0] - twin.d.qvel).max() / qvel_scale)
    print(case, f"{worst:.1e}")
    assert worst < STEP_TOLERANCE.get(case, 1e-12)
