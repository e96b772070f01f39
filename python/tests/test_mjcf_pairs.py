"""Contacts between geoms on different bodies under MuJoCo's contact law (pair contacts) against
PyPI's MuJoCo (its Newton solver to convergence): two free bodies with a sphere or capsule each, the
second placed at random near the first, and MuJoCo's rules of which geoms touch (contype and
conaffinity, a body and its parent, <exclude>, explicit <pair>s with their own parameters, static
geoms, filterparent), comparing udot with qacc, every contact point (dist, position, normal, force in
the contact frame) with MuJoCo's contacts and mj_contactForce, every sensor (touch included) and
mujocoBody (cfrc_ext). Each feature names changes of its attributes; each, made on MuJoCo's side
only, must make a comparison fail. Then Gymnasium's Humanoid-v5, whose limbs touch each other."""
import itertools
import os

import numpy as np
import pytest

from mujoco_twin import _SOFT_WIDTH, Twin, change_id, changes_of, mujoco, mutate, with_sensors

TOLERANCE = 1e-8  # of max(1, the largest value), as test_mjcf_contacts.py's
# A capsule against a cylinder: MuJoCo's general convex collision (EPA) stops on the depth, which it
# gets to 1e-12, but leaves the normal only to about 1e-6 whatever its ccd_tolerance; Lockstep's is
# exact (test_cylinder_contacts_at_1000_random_poses_are_mujocos checks it by its optimality).
CONVEX_TOLERANCE = 1e-5
# A sphere against an ellipsoid: the same general convex collision, whose normal is good to about 3e-8
# at the median and 2e-5 at worst with the sphere's centre outside the ellipsoid (and to 1e-2 only
# with it inside, where the depth hardly changes with the direction: such states are drawn again),
# which moves qacc by up to 2e-5 of its size at the features' states; Lockstep's is exact
# (test_sphere_ellipsoid_contacts_at_1000_random_poses_are_mujocos).
ELLIPSOID_TOLERANCE = 1e-4
STATES = 12

SPHERE, CAPSULE = 'type="sphere" size=".1"', 'type="capsule" size=".05 .15"'
SMALL_CAPSULE = 'type="capsule" size=".04 .12"'
CYLINDER = 'type="cylinder" size=".08 .1"'
ELLIPSOID = 'type="ellipsoid" size=".12 .07 .05"'
BOX = 'type="box" size=".12 .08 .1"'


def scene(first, second, geom1="", geom2="", option="", flags="", children="", world="", contact=""):
    """Body "a" (free, geom g1: `first`) and body "b" (free, geom g2: `second`), each with a site;
    `children` inside "a", `world` on the world body, a <contact> block; every sensor, and a touch
    sensor on each site (a sphere zone around the body)."""
    touch = '<touch name="touch_a" site="site_a"/><touch name="touch_b" site="site_b"/>'
    return with_sensors(f"""<mujoco model="pairs">
  <compiler angle="radian"/>
  <option timestep=".004" gravity=".3 -.2 -9.81" {option}>{flags}</option>
  <worldbody>
    {world}
    <body name="a" pos="0 0 1">
      <joint name="a_free" type="free"/>
      <geom name="g1" {first} mass="1.5" {geom1}/>
      <site name="site_a" type="sphere" size=".3"/>
      {children}
    </body>
    <body name="b" pos="0 0 2">
      <joint name="b_free" type="free"/>
      <geom name="g2" {second} mass=".8" euler=".3 .2 0" {geom2}/>
      <site name="site_b" type="sphere" size=".3"/>
    </body>
  </worldbody>
  {f"<contact>{contact}</contact>" if contact else ""}
</mujoco>""", touch)


# A child of "a" on a hinge whose capsule always overlaps a's geom (MuJoCo leaves a body and its parent
# alone unless filterparent is disabled) and reaches out where "b" may touch it.
CHILD = """
      <body name="c" pos=".12 0 0">
        <joint name="c_hinge" type="hinge" axis="0 1 0" limited="true" range="-.5 .5"/>
        <geom name="g3" type="capsule" fromto="-.05 0 0 .2 0 0" size=".04" mass=".3"/>
      </body>"""
STATIC = '<geom name="post" type="capsule" fromto=".15 0 .6 .15 0 1.4" size=".06"/>'
WORLD_SPHERE = '<geom name="ball" type="sphere" pos="-.12 0 1.1" size=".08"/>'

# id -> (xml, the attributes to change on MuJoCo's side only: mujoco_twin.change's specs).
FEATURES = {
    "sphere_sphere": (scene(SPHERE, 'type="sphere" size=".07"', 'friction=".9"'), ['size=".07"']),
    "sphere_capsule_friction_max": (scene(SPHERE, CAPSULE, 'friction="1.3"', 'friction=".5"'),
                                    ['friction="1.3"', 'size=".05 .15"']),
    "capsule_sphere_in_mujocos_order": (scene(CAPSULE, SPHERE), [('.05 .15', '.05 .18')]),
    "sphere_box": (scene(SPHERE, 'type="box" size=".15 .1 .06"', 'friction=".9"'), ['size=".15 .1 .06"']),
    "box_sphere_in_mujocos_order": (scene('type="box" size=".12 .08 .1"', 'type="sphere" size=".07"', 'condim="1"'),
                                    ['size=".12 .08 .1"']),
    "capsule_capsule": (scene(CAPSULE, SMALL_CAPSULE, 'friction=".7"'), ['size=".04 .12"', 'euler=".3 .2 0"']),
    "sphere_cylinder": (scene(SPHERE, CYLINDER, 'friction=".9"'), ['size=".08 .1"', 'euler=".3 .2 0"']),
    "cylinder_sphere_in_mujocos_order": (scene(CYLINDER, 'type="sphere" size=".07"', 'condim="1"'),
                                         ['size=".08 .1"']),
    "box_box": (scene(BOX, 'type="box" size=".1 .07 .05"', 'friction=".9"'),
                ['size=".1 .07 .05"', 'euler=".3 .2 0"']),
    "box_box_margin": (scene(BOX, 'type="box" size=".06 .09 .04"', 'margin=".01"', 'condim="1"'),
                       ['margin=".01"', 'size=".06 .09 .04"']),
    "capsule_box": (scene(CAPSULE, BOX, 'friction=".8"'), ['size=".12 .08 .1"', 'euler=".3 .2 0"', 'size=".05 .15"']),
    "ellipsoid_box": (scene(ELLIPSOID, BOX, 'friction=".8"'), ['size=".12 .08 .1"', 'euler=".3 .2 0"']),
    "ellipsoid_ellipsoid": (scene(ELLIPSOID, 'type="ellipsoid" size=".09 .11 .04"', 'condim="1"'),
                            ['size=".09 .11 .04"', 'size=".12 .07 .05"']),
    "ellipsoid_cylinder": (scene(ELLIPSOID, CYLINDER, 'friction=".8"', 'margin=".01"'),
                           ['size=".08 .1"', 'euler=".3 .2 0"', 'margin=".01"']),
    "box_capsule_in_mujocos_order": (scene('type="box" size=".1 .06 .04"', SMALL_CAPSULE, 'margin=".01"', 'condim="1"'),
                                     ['margin=".01"', 'size=".04 .12"']),
    "sphere_ellipsoid": (scene(SPHERE, ELLIPSOID, 'friction=".9"'), ['size=".12 .07 .05"', 'euler=".3 .2 0"']),
    "ellipsoid_sphere_in_mujocos_order": (scene(ELLIPSOID, 'type="sphere" size=".07"', 'condim="1"'),
                                          ['size=".12 .07 .05"', 'size=".07"']),
    "capsule_ellipsoid": (scene(CAPSULE, ELLIPSOID, 'friction=".8"', 'margin=".01"'),
                          ['size=".12 .07 .05"', 'euler=".3 .2 0"', 'margin=".01"']),
    "ellipsoid_capsule_in_mujocos_order": (scene(ELLIPSOID, SMALL_CAPSULE), ['size=".12 .07 .05"', 'size=".04 .12"']),
    "capsule_cylinder": (scene(CAPSULE, CYLINDER, 'friction=".7"'), ['size=".08 .1"', 'euler=".3 .2 0"']),
    "cylinder_capsule_in_mujocos_order": (scene(CYLINDER, SMALL_CAPSULE), [('size=".08 .1"', 'size=".08 .12"')]),
    "condim_1_frictionless": (scene(CAPSULE, SMALL_CAPSULE, 'condim="1"', 'condim="1" friction="1.2"'),
                              [('condim="1" friction', 'condim="3" friction')]),
    "solref_solimp_mixed_by_solmix_margins_summed": (
        scene(CAPSULE, SPHERE, 'solref=".015 .7" solimp=".8 .9 .002 .3 3" solmix="3" margin=".01"',
              'solref=".03 1.2" solmix=".5" margin=".005"'),
        ['solref=".015 .7"', 'solmix="3"', 'margin=".01"', ('solimp=".8 .9 .002 .3 3"', 'solimp=".8 .85 .002 .3 3"')]),
    "priority_picks_the_geoms_parameters": (
        scene(SPHERE, CAPSULE, 'priority="1" friction=".4" solref=".01 .9"', 'friction="1.3" condim="1"'),
        ['friction=".4"', ('priority="1"', 'priority="0"')]),
    "impratio": (scene(SPHERE, CAPSULE, 'friction="1.1"', option='impratio="3"'), ['impratio="3"']),
    "elliptic_cone": (scene(CAPSULE, BOX, 'friction=".9"', option='cone="elliptic" impratio="3"'),
                      [('cone="elliptic"', 'cone="pyramidal"'), 'impratio="3"']),
    "elliptic_cone_box_pair": (scene(BOX, BOX, 'friction=".7"', option='cone="elliptic"'),
                               [('cone="elliptic"', 'cone="pyramidal"')]),
    "contype_conaffinity": (scene(SPHERE, CAPSULE, 'contype="2" conaffinity="2"', 'contype="1" conaffinity="1"',
                                  children=CHILD.replace('size=".04"', 'size=".04" contype="4" conaffinity="4"')),
                            [('contype="1" conaffinity="1"', 'contype="1" conaffinity="3"'),
                             ('contype="4" conaffinity="4"', 'contype="4" conaffinity="1"')]),
    "parent_and_child_do_not_touch": (scene(CAPSULE, SPHERE, children=CHILD),
                                      [('></option>', '><flag filterparent="disable"/></option>')]),
    "filterparent_disabled": (scene(CAPSULE, SPHERE, children=CHILD, flags='<flag filterparent="disable"/>'),
                              ['filterparent="disable"']),
    "exclude": (scene(CAPSULE, SPHERE, children=CHILD, contact='<exclude body1="a" body2="b"/>'),
                [('<exclude body1="a" body2="b"/>', '<exclude body1="c" body2="b"/>')]),
    "explicit_pair_with_its_own_parameters": (
        scene(CAPSULE, CAPSULE, 'contype="0"', 'contype="0" conaffinity="0"',
              contact='<pair geom1="g2" geom2="g1" condim="3" friction=".3 .3" solref=".01 .5" margin=".004"/>'),
        ['friction=".3 .3"', 'solref=".01 .5"', 'margin=".004"']),
    # Torsional and rolling friction between moving geoms (condim 6), and an explicit pair's own five
    # coefficients (t1, t2, torsional, roll1, roll2) under the elliptic cone.
    "condim_6_pair": (scene(SPHERE, CAPSULE, 'condim="6" friction=".8 .03 .02"'),
                      [('condim="6"', 'condim="4"'), ('friction=".8 .03 .02"', 'friction=".8 .03 .04"')]),
    "explicit_pair_condim_6_elliptic_cone": (
        scene(CAPSULE, CAPSULE, 'contype="0"', 'contype="0" conaffinity="0"', option='cone="elliptic"',
              contact='<pair geom1="g2" geom2="g1" condim="6" friction=".6 .6 .04 .01 .01"/>'),
        [('condim="6"', 'condim="4"'), ('friction=".6 .6 .04 .01 .01"', 'friction=".6 .6 .02 .01 .01"'),
         ('friction=".6 .6 .04 .01 .01"', 'friction=".6 .6 .04 .03 .03"')]),
    "static_geoms_on_the_world_body": (scene(SPHERE, CAPSULE, world=STATIC + WORLD_SPHERE),
                                       ['size=".06"', ('pos="-.12 0 1.1"', 'pos="-.12 0 1.12"')]),
}


def touching_points(twin):
    """The rows of softContact (world 0) whose points touch."""
    ours = np.array(twin.batch.softContact[0]).reshape(-1, _SOFT_WIDTH)
    return ours[ours[:, 0] > 0.5]


def pair_state(twin, rng, reach):
    """A random state (speeds, joint angles, a's pose) with b's centre within `reach` of a's, in a
    cube about it: most of them touch."""
    qpos, qvel, ctrl = twin.random_state(rng, beyond_range=0.1)
    m = twin.m
    a = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "a_free")]
    b = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "b_free")]
    qpos[a:a + 3] = [0, 0, 1]
    qpos[b:b + 3] = qpos[a:a + 3] + rng.uniform(-reach, reach, 3) / np.sqrt(3)
    return qpos, qvel, ctrl


def tolerance_of(feature):
    if "ellipsoid" in feature:
        return ELLIPSOID_TOLERANCE
    return CONVEX_TOLERANCE if "capsule_cylinder" in feature or "cylinder_capsule" in feature else TOLERANCE


def exact_convex_collision(m):
    """MuJoCo's general convex collision (a capsule against a cylinder) to 1e-12 with one contact
    (multiccd off): exact geometry, which Lockstep's closed form gives (docs/mjcf.md)."""
    m.opt.ccd_tolerance = 1e-12
    m.opt.ccd_iterations = 200
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_MULTICCD


def too_deep_to_compare(m, d):
    """Whether a capsule's segment enters a cylinder or an ellipsoid (a contact deeper than the
    capsule's radius), where Lockstep's contact is not MuJoCo's (docs/mjcf.md), or a sphere's centre
    enters an ellipsoid, where MuJoCo's normal is good to 1e-2 only: such states are drawn again."""
    geom = mujoco.mjtGeom
    deep = {(int(geom.mjGEOM_CAPSULE), int(geom.mjGEOM_CYLINDER)): int(geom.mjGEOM_CAPSULE),
            (int(geom.mjGEOM_SPHERE), int(geom.mjGEOM_ELLIPSOID)): int(geom.mjGEOM_SPHERE),
            (int(geom.mjGEOM_CAPSULE), int(geom.mjGEOM_ELLIPSOID)): int(geom.mjGEOM_CAPSULE)}
    for c in d.contact[:d.ncon]:
        types = tuple(sorted((int(m.geom_type[c.geom1]), int(m.geom_type[c.geom2]))))
        if types in deep:
            inner = c.geom1 if m.geom_type[c.geom1] == deep[types] else c.geom2
            if c.dist < -m.geom_size[inner][0]:
                return True
    return False


def worst_pair_errors(twin, states, seed=11):
    m = twin.m
    exact_convex_collision(m)
    reach = sum(m.geom_rbound[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g)] for g in ("g1", "g2"))
    rng = np.random.default_rng(seed)
    worst, touching, compared = {}, 0, 0
    while compared < states:
        twin.set_state(*pair_state(twin, rng, reach))
        if too_deep_to_compare(m, twin.d):
            continue
        compared += 1
        touching += any(m.geom_bodyid[c.geom1] != m.geom_bodyid[c.geom2] for c in twin.d.contact[:twin.d.ncon])
        for k, v in twin.errors().items():
            worst[k] = max(worst.get(k, 0.0), v)
    return worst, touching


@pytest.mark.parametrize("feature", FEATURES)
def test_pair_contact_feature_equals_mujoco(feature, tmp_path):
    twin = Twin(tmp_path, FEATURES[feature][0], law="mujoco")
    assert not twin.model.warnings, twin.model.warnings
    worst, touching = worst_pair_errors(twin, STATES)
    print(feature, {k: f"{v:.1e}" for k, v in worst.items()}, f"touching in {touching}/{STATES}")
    failing = {k: v for k, v in worst.items() if not v <= tolerance_of(feature)}
    assert not failing, f"{feature}: {failing}"
    if feature not in ("contype_conaffinity", "exclude"):  # (these leave few pairs that touch, by design)
        assert touching >= STATES // 3, f"{feature}: contacts in only {touching} states"


@pytest.mark.parametrize("feature,change", changes_of(FEATURES), ids=change_id)
def test_pair_contact_feature_change_on_mujocos_side_is_noticed(feature, change, tmp_path):
    xml = FEATURES[feature][0]
    twin = Twin(tmp_path, xml, law="mujoco", mujoco_xml=mutate(xml, *change))
    worst, _ = worst_pair_errors(twin, STATES)
    assert max(worst.values()) > 100 * tolerance_of(feature), f"{feature}: {change} changes nothing compared: {worst}"


def test_pair_contacts_are_listed_and_other_kinds_are_named_in_a_warning(tmp_path):
    """A pair that Lockstep does not collide yet (a cylinder against a box) is named in a warning; the
    pairs it has are elements of the model (lockstep info), named by their geoms."""
    xml = scene('type="box" size=".1 .1 .1"', CYLINDER, children=CHILD)
    twin = Twin(tmp_path, xml, law="mujoco")
    assert any("cylinder-box (1 pair)" in w for w in twin.model.warnings), twin.model.warnings
    info = twin.model.info
    assert "pair contacts 1" in info and "'g3/g2'" in info and "against cylinder" in info, info



@pytest.mark.parametrize("friction,named", [(".6 .4 .04 .01 .01", True), (".6 .6 .04 .01 .03", True),
                                            (".6 .6 .04 .01 .01", False)])
def test_an_explicit_pairs_anisotropic_friction_is_named_in_a_warning(friction, named, tmp_path):
    """Lockstep's contacts take one sliding friction for both tangents and one rolling friction for both
    axes: an explicit pair whose second tangent or second rolling axis has its own value is named."""
    xml = scene(CAPSULE, CAPSULE, 'contype="0"', 'contype="0" conaffinity="0"',
                contact=f'<pair geom1="g2" geom2="g1" condim="6" friction="{friction}"/>')
    twin = Twin(tmp_path, xml, law="mujoco")
    warned = [w for w in twin.model.warnings if "second tangential or rolling friction" in w]
    assert bool(warned) == named and all("g1/g2" in w for w in warned), twin.model.warnings  # MuJoCo's order
    assert "condim 6 (pyramid), friction 0.6, torsional 0.04, rolling 0.01" in twin.model.info, twin.model.info


def test_humanoid_limbs_touch_each_other_as_in_mujoco(tmp_path):
    """Gymnasium's humanoid.xml at 20 states along MuJoCo's own rollout (random controls, from qpos0
    with noise), where it touches the floor and, in most, its limbs touch each other: qacc, every
    contact point and force, cfrc_ext and the sensors equal MuJoCo's."""
    import os
    import gymnasium
    xml = open(os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", "humanoid.xml")).read()
    twin = Twin(tmp_path, xml, law="mujoco")
    m, d = twin.m, twin.d
    rng = np.random.default_rng(3)
    d.qpos[:] = m.qpos0
    d.qpos[7:] += rng.uniform(-0.1, 0.1, m.nq - 7)
    worst, self_touching, compared = {}, 0, 0
    for step in range(1, 2000):
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)  # clamped to ctrlrange
        mujoco.mj_step(m, d)
        if step % 25:
            continue
        limbs = sum(m.geom_bodyid[c.geom[0]] != 0 and m.geom_bodyid[c.geom[1]] != 0 for c in d.contact[:d.ncon])
        if d.ncon == 0:
            continue
        twin.set_state(d.qpos.copy(), d.qvel.copy(), d.ctrl.copy())
        self_touching += limbs > 0
        compared += 1
        for k, v in twin.errors().items():
            worst[k] = max(worst.get(k, 0.0), v)
        if compared == 20:
            break
    print({k: f"{v:.1e}" for k, v in worst.items()}, f"limbs touching in {self_touching}/{compared}")
    assert compared == 20
    assert self_touching >= 5, f"limbs touch each other in only {self_touching} of the states"
    failing = {k: v for k, v in worst.items() if not v <= 1e-6}
    assert not failing, failing


def test_a_sphere_whose_centre_is_inside_a_box_is_pushed_out_of_the_nearest_face_as_in_mujoco_4(tmp_path):
    """MuJoCo 4's sphere-box with the sphere's centre inside the box: the nearest face's inward
    normal, the depth that face's distance plus the radius (MuJoCo 2.2.2 took the radius alone),
    at 12 random poses of the centre inside the box, against PyPI's MuJoCo 4.0."""
    twin = Twin(tmp_path, scene(SPHERE, 'type="box" size=".15 .1 .06"'), law="mujoco")
    m = twin.m
    rng = np.random.default_rng(4)
    worst = {}
    for _ in range(12):
        qpos, qvel, ctrl = twin.random_state(rng)
        a = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "a_free")]
        b = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "b_free")]
        qpos[a:a + 3] = [0, 0, 1]
        qpos[b:b + 3] = [0, 0, 1]  # the box's centre on the sphere's, then the box turned and moved a little
        qpos[b:b + 3] += rng.uniform(-0.03, 0.03, 3)
        twin.set_state(qpos, qvel, ctrl)
        assert twin.d.ncon == 1 and twin.d.contact[0].dist < -m.geom_size[0][0], twin.d.contact[0].dist
        for k, v in twin.errors().items():
            worst[k] = max(worst.get(k, 0.0), v)
    failing = {k: v for k, v in worst.items() if not v <= TOLERANCE}
    assert not failing, failing


@pytest.mark.parametrize("kind", ["sphere", "capsule"])
def test_cylinder_contacts_at_1000_random_poses_are_mujocos(kind, tmp_path):
    """A sphere or a capsule against a cylinder at 1,000 random relative poses within reach: the same
    contacts as MuJoCo's mj_collision (multiccd off), in count, dist, point and normal. A sphere's
    are MuJoCo's closed form, to 1e-12. A capsule's are MuJoCo's general convex collision, whose
    normal is good to about 1e-6 only (its EPA stops on the depth): dist to 1e-9, point and normal to
    1e-5; and Lockstep's own are exact: where the capsule's segment point lies inside the segment, the
    normal is perpendicular to the capsule's axis (the least distance's condition) to 1e-11, where
    MuJoCo's is off by up to 1e-6. Poses where the capsule's segment itself enters the cylinder
    (docs/mjcf.md: Lockstep pushes its deepest point out of the nearest face there) are counted, not
    compared."""
    first = SPHERE if kind == "sphere" else SMALL_CAPSULE
    twin = Twin(tmp_path, scene(first, CYLINDER), law="mujoco")
    m, d = twin.m, twin.d
    exact_convex_collision(m)
    g1 = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "g1")
    radius, half = m.geom_size[g1][0], m.geom_size[g1][1]
    reach = sum(m.geom_rbound[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g)] for g in ("g1", "g2"))
    rng = np.random.default_rng(17)
    worst_dist, worst_frame, ours_off, theirs_off, touching, deep, inner = 0.0, 0.0, 0.0, 0.0, 0, 0, 0
    for _ in range(1000):
        qpos, qvel, ctrl = pair_state(twin, rng, reach)
        qvel[:] = 0
        twin.set_state(qpos, qvel, ctrl)
        theirs = [d.contact[c] for c in range(d.ncon)]
        if too_deep_to_compare(m, d):
            deep += 1
            continue
        ours = touching_points(twin)
        assert len(ours) == len(theirs), (qpos, [c.dist for c in theirs], ours)
        touching += len(theirs) > 0
        for row, c in zip(ours, theirs):
            worst_dist = max(worst_dist, abs(row[1] - c.dist))
            worst_frame = max(worst_frame, np.abs(row[2:5] - c.pos).max(), np.abs(row[5:8] - c.frame[:3]).max())
            if kind == "capsule":
                axis = d.geom_xmat[g1].reshape(3, 3)[:, 2]
                segment_point = row[2:5] - (radius + row[1] / 2) * row[5:8]
                if abs(np.dot(segment_point - d.geom_xpos[g1], axis)) < half * (1 - 1e-6):
                    inner += 1
                    ours_off = max(ours_off, abs(np.dot(row[5:8], axis)))
                    theirs_off = max(theirs_off, abs(np.dot(c.frame[:3], axis)))
    print(f"{kind}-cylinder: {touching} poses touching ({inner} inside the segment), {deep} with the segment inside "
          f"the cylinder; dist {worst_dist:.1e}, point and normal {worst_frame:.1e}; normal . axis: Lockstep's "
          f"{ours_off:.1e}, MuJoCo's {theirs_off:.1e}")
    assert touching >= 250 and deep < 400, (touching, deep)
    if kind == "sphere":
        assert worst_dist < 1e-12 and worst_frame < 1e-12, (worst_dist, worst_frame)
    else:
        assert worst_dist < 1e-9 and worst_frame < CONVEX_TOLERANCE and inner >= 100 and ours_off < 1e-11, \
            (worst_dist, worst_frame, inner, ours_off)


@pytest.mark.parametrize("kind,margin", [("sphere", 0.0), ("sphere", 0.02), ("capsule", 0.0), ("capsule", 0.02)])
def test_ellipsoid_contacts_at_1000_random_poses_are_mujocos(kind, margin, tmp_path):
    """A sphere or a capsule against an ellipsoid at 1,000 random relative poses within reach: the
    same contacts as MuJoCo's mj_collision (its general convex collision; multiccd leaves ellipsoids
    alone), in count and dist (to 1e-9 with the sphere's centre, or the capsule's deepest segment
    point, outside the ellipsoid, 1e-5 with it inside). Lockstep's are exact: its surface point (the
    centre or segment point moved by dist plus the radius along the normal) is on the ellipsoid and
    the ellipsoid's normal there is the contact's, to 1e-12, outside the ellipsoid and inside it; a
    capsule's segment point, where it lies inside the segment, has the normal perpendicular to the
    capsule's axis (the least distance's condition) to 1e-10. MuJoCo's EPA leaves the normal to about
    1e-7 (the median of the poses) and 2e-5 (the worst) outside, and to 1e-2 inside (where the depth
    hardly changes with the direction). Poses where a capsule's segment itself enters the ellipsoid
    (docs/mjcf.md: Lockstep pushes its deepest point out, MuJoCo the whole capsule) are counted, not
    compared."""
    twin = Twin(tmp_path, scene(SPHERE if kind == "sphere" else SMALL_CAPSULE, ELLIPSOID, f'margin="{margin}"'),
                law="mujoco")
    m, d = twin.m, twin.d
    exact_convex_collision(m)
    g1, g2 = (mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in ("g1", "g2"))
    radius, half, radii = m.geom_size[g1][0], m.geom_size[g1][1], m.geom_size[g2]
    reach = m.geom_rbound[g1] + m.geom_rbound[g2]
    rng = np.random.default_rng(41)
    exact, perpendicular, offs, touching, segment_inside, dist_off, inner = 0.0, 0.0, [], 0, 0, [], 0
    for _ in range(1000):
        qpos, qvel, ctrl = pair_state(twin, rng, reach)
        twin.set_state(qpos, qvel, ctrl)
        theirs = [d.contact[c] for c in range(d.ncon)]
        if kind == "capsule" and too_deep_to_compare(m, d):
            segment_inside += 1
            continue
        ours = touching_points(twin)
        assert len(ours) == len(theirs), (qpos, [c.dist for c in theirs], ours)
        touching += len(theirs) > 0
        for row, c in zip(ours, theirs):
            dist, normal = row[1], row[5:8]
            inside = dist < -radius
            point = row[2:5] - (radius + dist / 2) * normal  # the sphere's centre, the capsule's segment point
            R, centre = d.geom_xmat[g2].reshape(3, 3), d.geom_xpos[g2]
            x = R.T @ (point + (dist + radius) * normal - centre)  # the surface point, ellipsoid frame
            gradient = x / radii ** 2
            exact = max(exact, abs(np.sum((x / radii) ** 2) - 1),
                        np.linalg.norm(np.cross(R @ gradient / np.linalg.norm(gradient), normal)))
            if kind == "capsule":
                axis = d.geom_xmat[g1].reshape(3, 3)[:, 2]
                if abs(np.dot(point - d.geom_xpos[g1], axis)) < half * (1 - 1e-6):
                    inner += 1
                    perpendicular = max(perpendicular, abs(np.dot(normal, axis)))
            dist_off.append((abs(dist - c.dist), inside, np.abs(normal - c.frame[:3]).max()))
    dist_off = np.array(dist_off)
    out, ins = dist_off[dist_off[:, 1] == 0], dist_off[dist_off[:, 1] == 1]
    print(f"{kind}-ellipsoid, margin {margin}: {touching} poses touching ({len(ins)} inside, {inner} inside the "
          f"segment), {segment_inside} with the segment inside the ellipsoid; dist {out[:, 0].max():.1e} outside, "
          f"{ins[:, 0].max() if len(ins) else 0:.1e} inside; Lockstep's surface point and normal exact to "
          f"{exact:.1e}, normal . axis {perpendicular:.1e}; MuJoCo's normal off by {np.median(out[:, 2]):.1e} (median), "
          f"{out[:, 2].max():.1e} (worst) outside, {ins[:, 2].max() if len(ins) else 0:.1e} inside")
    assert touching >= 200 and (kind == "capsule" or len(ins) >= 100), (touching, len(ins))
    assert out[:, 0].max() < 1e-9 and dist_off[:, 0].max() < 1e-5 and exact < 1e-12, (out[:, 0].max(), exact)
    assert np.median(out[:, 2]) < 1e-6 and out[:, 2].max() < 1e-4 and dist_off[:, 2].max() < 0.05
    if kind == "capsule":
        assert inner >= 100 and perpendicular < 1e-10, (inner, perpendicular)


def first_points_in_float32_and_float64(twin, qpos):
    """softContact's first point of each state of qpos (rows of MuJoCo's qpos, speeds zero), evaluated
    in a float32 batch and in a float64 one: (float32's, float64's), every world healthy."""
    import lockstep
    points = {}
    for dtype in ("float64", "float32"):
        batch = lockstep.Batch(twin.model, len(qpos), dtype=dtype)
        batch.set_state(*twin.model.from_mujoco(qpos, np.zeros((len(qpos), twin.m.nv))))
        batch.evaluate()
        assert not np.any(batch.status)
        points[dtype] = np.array(batch.softContact, dtype=np.float64).reshape(len(qpos), -1, _SOFT_WIDTH)[:, 0]
    return points["float32"], points["float64"]


@pytest.mark.parametrize("kind", ["sphere", "capsule"])
def test_ellipsoid_contacts_in_float_equal_float64s(kind, tmp_path):
    """A sphere or a capsule against an ellipsoid at 512 random relative poses within reach, deep ones
    included (a capsule's segment crossing the ellipsoid's middle plane, where its deepest point is a
    kink of the signed distance and the nearest surface point's t is within a rounding of -min a^2),
    evaluated in float32 and float64: the same points touch, at the same dist to 1e-5 (float's
    rounding of the frames), and where the sphere's centre or the capsule's point is outside the
    ellipsoid, with the same normal to 1e-4."""
    twin = Twin(tmp_path, scene(SPHERE if kind == "sphere" else SMALL_CAPSULE, ELLIPSOID), law="mujoco")
    m, rng = twin.m, np.random.default_rng(43)
    reach = sum(m.geom_rbound[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g)] for g in ("g1", "g2"))
    qpos = np.array([pair_state(twin, rng, reach)[0] for _ in range(512)])
    ours, theirs = first_points_in_float32_and_float64(twin, qpos)
    radius = m.geom_size[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "g1")][0]
    touching = theirs[:, 0] > 0.5
    outside = touching & (theirs[:, 1] > -radius)
    dist = np.abs(ours[touching, 1] - theirs[touching, 1]).max()
    normal = np.abs(ours[outside, 5:8] - theirs[outside, 5:8]).max()
    print(f"{kind}-ellipsoid in float32: {touching.sum()} touching ({touching.sum() - outside.sum()} deep); dist off by "
          f"{dist:.1e}, normal (outside) by {normal:.1e}")
    assert np.array_equal(ours[:, 0] > 0.5, touching) and touching.sum() - outside.sum() >= 50
    assert dist < 1e-5 and normal < 1e-4, (dist, normal)


OTHER_ELLIPSOID = 'type="ellipsoid" size=".09 .11 .04"'
SMALL_BOX = 'type="box" size=".1 .07 .05"'


ELLIPSOID_PARTNERS = {"box": SMALL_BOX, "ellipsoid": OTHER_ELLIPSOID, "cylinder": CYLINDER}


@pytest.mark.parametrize("kind,margin", [("box", 0.0), ("box", 0.02), ("ellipsoid", 0.0), ("ellipsoid", 0.02),
                                         ("cylinder", 0.0), ("cylinder", 0.02)])
def test_ellipsoid_box_and_ellipsoid_pairs_at_1000_random_poses_are_mujocos(kind, margin, tmp_path):
    """An ellipsoid against a box, another ellipsoid or a cylinder at 1,000 random relative poses
    within reach, deep ones included: the same contacts as MuJoCo's mj_collision (its general convex
    collision to 1e-12; multiccd leaves ellipsoids alone: one contact), in count and dist to 1e-9 and
    point to 1e-5. Lockstep's are exact: the contact's ends (the point -+ dist / 2 along the normal)
    lie on the two surfaces, each the surface's point farthest along its outward normal there (the
    ellipsoid's normal, the other's opposite), to 1e-10. MuJoCo's EPA leaves the normal to about 1e-6
    (the median) and 1e-4 (the worst)."""
    twin = Twin(tmp_path, scene(ELLIPSOID, ELLIPSOID_PARTNERS[kind], f'margin="{margin}"'), law="mujoco")
    m, d = twin.m, twin.d
    exact_convex_collision(m)
    g1, g2 = (mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in ("g1", "g2"))
    reach = m.geom_rbound[g1] + m.geom_rbound[g2]
    rng = np.random.default_rng(47)
    off, exact, touching, deep = [], 0.0, 0, 0
    for _ in range(1000):
        twin.set_state(*pair_state(twin, rng, reach))
        theirs = [d.contact[c] for c in range(d.ncon)]
        ours = touching_points(twin)
        assert len(ours) == len(theirs), ([c.dist for c in theirs], ours)
        touching += len(theirs) > 0
        for row, c in zip(ours, theirs):
            dist, pos, normal = row[1], row[2:5], row[5:8]
            deep += dist < -0.03
            ends = []
            for g, end, outward in ((g1, pos - dist / 2 * normal, normal), (g2, pos + dist / 2 * normal, -normal)):
                R, size = d.geom_xmat[g].reshape(3, 3), m.geom_size[g]
                x, n = R.T @ (end - d.geom_xpos[g]), R.T @ outward
                if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX:  # on a face whose normal n does not point into
                    ends.append(abs(np.max(np.abs(x) / size) - 1))
                    ends.append(max(0.0, np.max(-np.sign(x) * n * (np.abs(x) > size * (1 - 1e-9)))))
                elif m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CYLINDER:  # on the surface, its support along n
                    radius, half = size[0], size[1]
                    across = np.linalg.norm(x[:2])
                    ends.append(abs(max(across / radius, abs(x[2]) / half) - 1))
                    ends.append(abs(half * abs(n[2]) + radius * np.linalg.norm(n[:2]) - n @ x))
                else:
                    gradient = x / size ** 2
                    ends.append(abs(np.sum((x / size) ** 2) - 1))
                    ends.append(np.linalg.norm(np.cross(gradient / np.linalg.norm(gradient), n)))
            exact = max(exact, *ends)
            off.append((abs(dist - c.dist), np.abs(pos - c.pos).max(), np.abs(normal - c.frame[:3]).max()))
    off = np.array(off)
    print(f"ellipsoid-{kind}, margin {margin}: {touching} poses touching ({deep} deeper than 3 cm); dist off by "
          f"{off[:, 0].max():.1e}, point by {off[:, 1].max():.1e}; Lockstep's ends on the surfaces to {exact:.1e}; "
          f"MuJoCo's normal off by {np.median(off[:, 2]):.1e} (median), {off[:, 2].max():.1e} (worst)")
    assert touching >= 300 and deep >= 50, (touching, deep)
    assert off[:, 0].max() < 1e-9 and off[:, 1].max() < 1e-5 and exact < 1e-10, (off.max(axis=0), exact)
    assert np.median(off[:, 2]) < 1e-5 and off[:, 2].max() < 1e-3, off[:, 2]


def support(m, d, g, n):
    """The support function of geom g (an ellipsoid, a box or a cylinder) along the world directions n
    (rows)."""
    R, size, centre = d.geom_xmat[g].reshape(3, 3), m.geom_size[g], d.geom_xpos[g]
    local = n @ R
    if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
        reach = np.linalg.norm(size * local, axis=-1)
    elif m.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX:
        reach = np.abs(local) @ size
    else:
        reach = size[1] * np.abs(local[..., 2]) + size[0] * np.linalg.norm(local[..., :2], axis=-1)
    return n @ centre + reach


@pytest.mark.parametrize("kind,radii", [("box", ".1 .1 .05"), ("ellipsoid", ".12 .07 .05"), ("cylinder", ".06 .06 .06")])
def test_ellipsoid_pairs_at_poses_with_their_axes_lined_up_are_never_deeper_than_mujocos(kind, radii, tmp_path):
    """An ellipsoid (round ones included: its section a circle, or a sphere) against a box, another
    ellipsoid or a cylinder turned by quarter turns about the ellipsoid's axes, the second's centre on
    a grid about the first's with zeros (corners, edges and centres on the ellipsoid's axis planes,
    where roots of Lagrange's equation sit on its poles): 216 poses. Lockstep's depth is the least
    over all directions, so no direction may give a smaller one: neither MuJoCo's normal nor any of
    4,000 others spread over the sphere. The same pairs touch, but for poses within 1e-9 of touching.
    MuJoCo's EPA is not exact at such poses (its dist off by up to 6e-4, its own normal giving a depth
    other than its dist): its dist is asserted to 1e-3 only. The first exact ellipsoid-box pair went
    3e-5 deeper than MuJoCo's normal here (a corner's root on a pole)."""
    first = f'type="ellipsoid" size="{radii}"'
    twin = Twin(tmp_path, scene(first, ELLIPSOID_PARTNERS[kind]), law="mujoco")
    m, d = twin.m, twin.d
    exact_convex_collision(m)
    g1, g2 = (mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in ("g1", "g2"))
    a = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "a_free")]
    b = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "b_free")]
    qvel, ctrl = np.zeros(m.nv), np.zeros(m.nu)
    turns = [(1, 0, 0, 0), (0, 1, 0, 0), (0, 0, 1, 0), (0, 0, 0, 1), (1, 1, 0, 0), (1, 0, 1, 0), (1, 0, 0, 1), (1, 1, 1, 1)]
    unturn = np.empty(4)
    mujoco.mju_negQuat(unturn, m.geom_quat[g2])  # the body's quaternion that lines the geom up as asked
    directions = np.random.default_rng(61).normal(size=(4000, 3))
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    touching, worst_above, worst_off = 0, -np.inf, 0.0
    for turn in turns:
        for offset in itertools.product((-0.1, 0.0, 0.07), repeat=3):
            qpos = m.qpos0.copy()
            qpos[a:a + 7] = [0, 0, 1, 1, 0, 0, 0]
            qpos[b:b + 3] = np.array([0, 0, 1]) + offset
            mujoco.mju_mulQuat(qpos[b + 3:b + 7], np.array(turn, float) / np.linalg.norm(turn), unturn)
            twin.set_state(qpos, qvel, ctrl)
            ours = touching_points(twin)
            if len(ours) != d.ncon:
                assert abs(ours[0, 1] if len(ours) else d.contact[0].dist) < 1e-9, (offset, turn, ours, d.ncon)
                continue
            if not d.ncon:
                continue
            touching += 1
            c = d.contact[0]
            assert (c.geom1, c.geom2) == (g1, g2)
            n = np.vstack([c.frame[:3], directions])  # MuJoCo's normal (from g1 to g2) first
            depths = support(m, d, g1, n) + support(m, d, g2, -n)
            worst_above = max(worst_above, -ours[0, 1] - depths.min())
            worst_off = max(worst_off, abs(ours[0, 1] - c.dist))
    print(f"ellipsoid ({radii})-{kind}: {touching} of 216 poses touching; Lockstep's depth less the least of "
          f"MuJoCo's normal's and 4,000 others' {worst_above:.1e} at most; MuJoCo's dist off by {worst_off:.1e}")
    assert touching >= 100
    assert worst_above < 1e-12 and worst_off < 1e-3, (worst_above, worst_off)


@pytest.mark.parametrize("kind", ["box", "ellipsoid", "cylinder"])
def test_ellipsoid_box_and_ellipsoid_pairs_in_float_equal_float64s(kind, tmp_path):
    """The ellipsoid-box, ellipsoid and ellipsoid-cylinder pairs at 512 random poses, evaluated in
    float32 and float64: the same points touch (poses within 1e-5 of touching aside), at the same dist
    to 1e-5 and the same normal to 1e-3 (where the least translation is well apart from any other)."""
    twin = Twin(tmp_path, scene(ELLIPSOID, ELLIPSOID_PARTNERS[kind]), law="mujoco")
    m, rng = twin.m, np.random.default_rng(53)
    reach = sum(m.geom_rbound[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g)] for g in ("g1", "g2"))
    qpos = np.array([pair_state(twin, rng, reach)[0] for _ in range(512)])
    ours, theirs = first_points_in_float32_and_float64(twin, qpos)
    touching = theirs[:, 0] > 0.5
    clear = np.abs(theirs[:, 1]) > 1e-5
    dist = np.abs(ours[touching, 1] - theirs[touching, 1])
    normal = np.abs(ours[touching, 5:8] - theirs[touching, 5:8]).max(axis=1)
    print(f"ellipsoid-{kind} in float32: {touching.sum()} touching; dist off by {dist.max():.1e}, normal by "
          f"{np.median(normal):.1e} (median), {np.sort(normal)[-3:]} (the worst three)")
    assert np.array_equal((ours[:, 0] > 0.5)[clear], touching[clear]) and touching.sum() >= 150
    assert dist.max() < 1e-5 and np.median(normal) < 1e-4 and np.sort(normal)[-5] < 1e-3, (dist.max(), np.sort(normal)[-5:])


@pytest.mark.parametrize("margin", [0.0, 0.02])
def test_box_contacts_at_1000_random_poses_are_mujocos(margin, tmp_path):
    """Two boxes at 1,000 random relative poses within reach: the same contacts as MuJoCo 4's box
    pair (its separating axes, then a clipped face's vertices or an edge pair's nearest points), in
    count, dist, point and normal to 1e-12, matched by position (Lockstep finds the clipped
    polygon's vertices as a set, in another order). Poses with two or more points (a face) and with
    one (an edge pair, or a corner) both occur, with a margin and without."""
    twin = Twin(tmp_path, scene(BOX, 'type="box" size=".1 .07 .05"', f'margin="{margin}"'), law="mujoco")
    m, d = twin.m, twin.d
    reach = sum(m.geom_rbound[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g)] for g in ("g1", "g2"))
    rng = np.random.default_rng(19)
    worst, counts = 0.0, {}
    for _ in range(1000):
        qpos, qvel, ctrl = pair_state(twin, rng, reach)
        twin.set_state(qpos, qvel, ctrl)
        theirs = np.array([np.concatenate([[c.dist], c.pos, c.frame[:3]]) for c in d.contact[:d.ncon]])
        ours = touching_points(twin)[:, 1:8]
        assert len(ours) == len(theirs), (qpos, theirs, ours)
        counts[len(theirs)] = counts.get(len(theirs), 0) + 1
        for row in ours:
            worst = max(worst, np.abs(theirs - row).max(axis=1).min())
    print(f"box pairs, margin {margin}: poses by number of points {dict(sorted(counts.items()))}, worst {worst:.1e}")
    assert counts.get(1, 0) >= 50 and sum(v for k, v in counts.items() if k >= 2) >= 200 and counts.get(0, 0) >= 50, counts
    assert worst < 1e-12, worst


def near_grid_pose(m, rng, geom1, geom2, reach):
    """qpos of scene()'s two free bodies with the geoms' frames within about 1e-3 rad of each other
    turned by multiples of 45 degrees about their axes, and the second geom's centre within 1 mm of
    a point of a grid about the first's (or, in 3 of 10, anywhere within reach): the poses where a
    heuristic's cases split (a capsule pointing at a box's corner, lying along an edge or a face),
    off its exact ties."""
    def turned(q, angle, axis):
        r, out = np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis]), np.zeros(4)
        mujoco.mju_mulQuat(out, q, r)
        return out
    a = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "a_free")]
    b = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "b_free")]
    qpos = m.qpos0.copy()
    frame1 = np.array([1.0, 0, 0, 0])
    for _ in range(2):
        frame1 = turned(frame1, rng.integers(0, 8) * np.pi / 4, np.eye(3)[rng.integers(3)])
    twist = rng.normal(0, 1e-3, 3)
    frame1 = turned(frame1, np.linalg.norm(twist), twist / np.linalg.norm(twist))
    unturn1, unturn2 = np.zeros(4), np.zeros(4)  # each body turned so that its geom has the frame wanted
    mujoco.mju_negQuat(unturn1, m.geom_quat[geom1])
    mujoco.mju_negQuat(unturn2, m.geom_quat[geom2])
    mujoco.mju_mulQuat(qpos[a + 3:a + 7], frame1, unturn1)
    qpos[b + 3:b + 7] = unturn2
    qpos[a:a + 3] = [0, 0, 1]
    extent = m.geom_rbound[geom1] + m.geom_size[geom2][:3]
    offset = (rng.integers(-6, 7, 3) / 6 * extent + rng.normal(0, 1e-3, 3) if rng.random() < 0.7
              else rng.uniform(-reach, reach, 3) / np.sqrt(3))
    qpos[b:b + 3] = qpos[a:a + 3] + offset - m.geom_pos[geom2]  # (scene()'s geoms sit at their bodies' origins)
    return qpos


@pytest.mark.parametrize("margin", [0.0, 0.02])
def test_capsule_box_contacts_at_1000_random_poses_are_mujocos(margin, tmp_path):
    """A capsule and a box at 1,000 random relative poses within reach, and at 1,000 poses near a
    grid of turns by 45 degrees and offsets (near_grid_pose: a capsule pointing at a corner, lying
    along an edge or a face), where MuJoCo's heuristic splits into its cases: the same contacts as
    MuJoCo's capsule-box (the segment's point nearest the box, then its heuristic second point), in
    count, dist, point and normal to 1e-12 (1e-11 near the grid, where nearly parallel lines' nearest
    points round more), matched by position both ways (each of Lockstep's points
    is one of MuJoCo's and each of MuJoCo's one of Lockstep's). Poses with no point, one and two
    occur, with a margin and without."""
    twin = Twin(tmp_path, scene(SMALL_CAPSULE, BOX, f'margin="{margin}"'), law="mujoco")
    m, d = twin.m, twin.d
    g1, g2 = (mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, g) for g in ("g1", "g2"))
    reach = m.geom_rbound[g1] + m.geom_rbound[g2]
    rng = np.random.default_rng(37)
    for kind in ("random", "near a grid"):
        worst, counts = 0.0, {}
        for _ in range(1000):
            qpos, qvel, ctrl = pair_state(twin, rng, reach)
            if kind != "random":
                qpos = near_grid_pose(m, rng, g1, g2, reach)
            twin.set_state(qpos, qvel, ctrl)
            theirs = np.array([np.concatenate([[c.dist], c.pos, c.frame[:3]]) for c in d.contact[:d.ncon]])
            ours = touching_points(twin)[:, 1:8]
            assert len(ours) == len(theirs), (kind, qpos, theirs, ours)
            counts[len(theirs)] = counts.get(len(theirs), 0) + 1
            if len(ours):
                gaps = np.abs(theirs[:, None, :] - ours[None, :, :]).max(axis=2)
                worst = max(worst, gaps.min(axis=0).max(), gaps.min(axis=1).max())
        print(f"capsule-box, margin {margin}, {kind}: poses by number of points {dict(sorted(counts.items()))}, "
              f"worst {worst:.1e}")
        assert min(counts.get(k, 0) for k in (0, 1, 2)) >= 100, counts
        assert worst < (1e-12 if kind == "random" else 1e-11), worst  # (near-parallel lines round more)


def test_a_pair_that_stops_touching_reads_zero_in_every_world(tmp_path):
    """Every value of a pair's points (softContact) reads 0 in a world where the pair does not touch,
    whatever the other worlds of its pack do and whatever it did at the last evaluation: 16 worlds
    (several packs), every third touching, then the others, then none."""
    import lockstep
    path = tmp_path / "pair.xml"
    path.write_text(scene(CAPSULE, SMALL_CAPSULE))
    model = lockstep.load({"mjcf": {"path": str(path), "contact_law": "mujoco"}})
    batch = lockstep.Batch(model, 16, dtype="float64")
    names = model.field_components("softContact")
    pair = np.array(["/" in c for c in names])
    active = np.array(["/" in c and c.endswith(".active") for c in names])
    force = np.array(["/" in c and c.endswith((".force.normal", ".force.x", ".force.y", ".force.z")) for c in names])
    assert pair.sum() == 2 * _SOFT_WIDTH

    def evaluate(touching):
        qpos = np.zeros((16, 14))
        qpos[:, 2] = 1.0
        qpos[:, 3] = qpos[:, 10] = 1.0  # unit quaternions: both capsules upright
        qpos[:, 7:10] = [0.0, 0.0, 1.0]
        qpos[:, 7] = np.where(touching, 0.08, 0.5)  # 0.08 < 0.05 + 0.04: the sides press; 0.5: apart
        q, u = model.from_mujoco(qpos, np.zeros((16, 12)))
        batch.set_state(q, u)
        batch.evaluate()
        assert np.all(np.asarray(batch.status) == 0)
        values = np.asarray(batch.softContact)
        for w in range(16):
            if touching[w]:
                assert values[w, active].sum() >= 1 and np.abs(values[w, force]).max() > 0, w
            else:
                assert np.all(values[w, pair] == 0), (w, values[w, pair])

    every_third = np.arange(16) % 3 == 0
    evaluate(every_third)
    evaluate(~every_third)
    evaluate(np.zeros(16, dtype=bool))


def test_a_capsule_along_a_cylinders_side_touches_at_the_middle_of_the_stretch(tmp_path):
    """Where the least distance holds along a stretch (a capsule upright beside an upright cylinder,
    both frames exact), Lockstep's one contact is at the stretch's middle (docs/mjcf.md; MuJoCo picks
    an end): the overlap of the segment with the cylinder's height, at the mid-penetration, normal
    from the capsule to the cylinder."""
    import lockstep
    path = tmp_path / "side.xml"
    path.write_text("""<mujoco><option gravity="0 0 0"/><worldbody>
  <body name="a"><freejoint/><geom name="g1" type="capsule" size=".02 .1"/></body>
  <body name="b"><freejoint/><geom name="g2" type="cylinder" size=".05 .05"/></body>
</worldbody></mujoco>""")
    model = lockstep.load({"mjcf": {"path": str(path), "contact_law": "mujoco"}})
    batch = lockstep.Batch(model, 1, dtype="float64")
    names = model.field_components("softContact")
    for z, middle in [(0.03, 0.0), (0.12, 0.035), (-0.1, -0.025)]:  # segment z in [z - .1, z + .1], side in [-.05, .05]
        qpos = np.array([[0.069, 0.0, z, 1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]], dtype=float)
        q, u = model.from_mujoco(qpos, np.zeros((1, 12)))
        batch.set_state(q, u)
        batch.evaluate()
        values = dict(zip(names, np.asarray(batch.softContact)[0]))
        point = [k[:-len(".active")] for k in values if "/" in k and k.endswith(".active")][0]
        assert values[point + ".active"] == 1
        assert values[point + ".dist"] == pytest.approx(0.069 - 0.02 - 0.05, abs=1e-15)
        np.testing.assert_allclose([values[point + ".pos." + c] for c in "xyz"], [0.0495, 0.0, middle], atol=1e-15)
        np.testing.assert_allclose([values[point + ".normal." + c] for c in "xyz"], [-1.0, 0.0, 0.0], atol=1e-15)


def stack(offset):
    """Three boxes of other sizes, turned about the vertical, dropped 2 to 8 mm onto each other and
    the floor; each box's centre `offset` from the one below along x and y."""
    return f"""<mujoco model="stack">
  <option timestep=".005"/>
  <worldbody>
    <geom name="floor" type="plane" size="2 2 .1"/>
    <body name="bottom" pos="0 0 .102"><freejoint/><geom type="box" size=".1 .1 .1" mass="1"/></body>
    <body name="middle" pos="{offset} {-offset} .305" euler="0 0 .2"><freejoint/>
      <geom type="box" size=".08 .09 .1" mass=".8"/></body>
    <body name="top" pos="{-offset} {2 * offset} .508" euler="0 0 -.3"><freejoint/>
      <geom type="box" size=".1 .06 .1" mass=".5"/></body>
  </worldbody>
</mujoco>"""


@pytest.mark.parametrize("offset", [0.0, 0.01])
def test_a_stack_of_three_boxes_rests_without_creep_as_in_mujoco(offset, tmp_path):
    """A stack of three boxes (turned, of other sizes) dropped onto the floor, at MuJoCo's 5 ms Euler
    steps for 4 s: Lockstep's states equal MuJoCo's mj_step all the way (to 1e-12). Centred, the
    stack is at rest from 1 s on: no coordinate moves by more than 1e-12 in the last 3 s. With
    each box 1 to 2 cm off the one below, MuJoCo's own stack keeps moving (about 1e-3 in 3 s, its
    contact sets changing between steps), and Lockstep's with it."""
    twin = Twin(tmp_path, stack(offset), law="mujoco")
    m, d = twin.m, twin.d
    twin.set_state(m.qpos0.copy(), np.zeros(m.nv), np.zeros(0))
    worst, settled = 0.0, None
    for step in range(1, 801):
        twin.batch.step(1)
        mujoco.mj_step(m, d)
        ours = np.array(twin.batch.mujocoQpos[0])
        for a in (3, 10, 17):  # the quaternions' signs
            ours[a:a + 4] *= np.sign(ours[a:a + 4] @ d.qpos[a:a + 4])
        worst = max(worst, np.abs(ours - d.qpos).max())
        if step == 200:
            settled = ours.copy()
    creep = np.abs(ours - settled).max()
    print(f"stack, offset {offset}: worst |qpos - MuJoCo's| {worst:.1e}, creep {creep:.1e}, heights {ours[[2, 9, 16]]}")
    assert worst < 1e-12, worst
    assert np.allclose(ours[[2, 9, 16]], [0.1, 0.3, 0.5], atol=1e-3), ours[[2, 9, 16]]
    if offset == 0:
        assert creep < 1e-12, creep


# A bin of five static boxes on the world body, and a free box, a free ball and a free capsule to
# throw into it (three free joints: qpos 7 and qvel 6 each).
BIN = open(os.path.join(os.path.dirname(__file__), "..", "..", "models", "mjcf", "bin.xml")).read()
BODIES = 3
CENTRES = [7 * k + i for k in range(BODIES) for i in range(3)]


def bin_drops(m, worlds, rng):
    """qpos and qvel of `worlds` random drops into the bin: each body's centre 10 to 35 cm up, at
    least 18 cm from the others (their bounding spheres apart), turned at random, thrown at up to 2 m/s sideways (not over the
    walls) and 3 m/s down, spinning at up to 10 rad/s."""
    qpos = np.tile(m.qpos0, (worlds, 1))
    centres = rng.uniform([-.2, -.2, .1], [.2, .2, .35], (worlds, BODIES, 3))
    while True:  # drawn again where two bodies' bounding spheres overlap
        close = np.zeros(worlds, bool)
        for j in range(BODIES):
            for k in range(j):
                close |= np.linalg.norm(centres[:, j] - centres[:, k], axis=1) < 0.18
        if not close.any():
            break
        centres[close] = rng.uniform([-.2, -.2, .1], [.2, .2, .35], (close.sum(), BODIES, 3))
    for k in range(BODIES):
        qpos[:, 7 * k:7 * k + 3] = centres[:, k]
        q = rng.standard_normal((worlds, 4))
        qpos[:, 7 * k + 3:7 * k + 7] = q / np.linalg.norm(q, axis=1, keepdims=True)
    throw = [-2, -2, -3], [2, 2, 0]
    qvel = np.concatenate([np.concatenate([rng.uniform(*throw, (worlds, 3)), rng.uniform(-10, 10, (worlds, 3))], axis=1)
                           for _ in range(BODIES)], axis=1)
    return qpos, qvel


class BinCrossings:
    """Tracks each body's centre (worlds x bodies x 3) from step to step: a centre that crosses a
    wall's middle plane (the walls are 10 cm thick, 40 cm high) below the wall's top, or the floor's
    middle plane (20 cm thick), has passed through (`through` counts the steps of each body beyond);
    one that crosses a wall above its top has left the bin over it (`escaped`, per world and body),
    and is followed no further."""

    WALL, TOP, FLOOR = 0.35, 0.4, -0.1

    def __init__(self, centres):
        self.previous = centres
        self.escaped = np.zeros(centres.shape[:2], bool)
        self.through = 0

    def step(self, centres):
        prev, now = self.previous, centres
        for axis in (0, 1):
            crossing = (np.abs(prev[:, :, axis]) < self.WALL) & (np.abs(now[:, :, axis]) >= self.WALL) & ~self.escaped
            t = (self.WALL - np.abs(prev[:, :, axis])) / np.where(crossing, np.abs(now[:, :, axis]) - np.abs(prev[:, :, axis]), 1)
            height = prev[:, :, 2] + t * (now[:, :, 2] - prev[:, :, 2])
            self.through += np.sum(crossing & (height < self.TOP))
            self.escaped |= crossing & (height >= self.TOP)
        self.through += np.sum(~self.escaped & (now[:, :, 2] < self.FLOOR))
        self.previous = centres


def test_boxes_balls_and_capsules_thrown_into_a_bin_stay_in_it_at_10_ms_steps(tmp_path):
    """1,000 worlds, each a box, a ball and a capsule thrown at random into a bin of five static boxes
    (turned at random, at up to 2 m/s sideways, 3 m/s down and 10 rad/s), at the file's 10 ms steps
    for 3 s under MuJoCo's law, beside MuJoCo's mj_step of each: nothing passes through anything.
    Every world stays healthy, no body's centre passes through a wall or the floor (BinCrossings), 99%
    of the worlds follow MuJoCo's own trajectories to 1e-9 (impacts make a few diverge), the bodies
    that MuJoCo throws over a wall are Lockstep's, and the deepest any body goes into the floor, the
    walls or another body (MuJoCo's soft contacts at 10 ms: centimetres at 3 m/s) is MuJoCo's."""
    import lockstep
    path = tmp_path / "bin.xml"
    path.write_text(BIN)
    model = lockstep.load({"mjcf": {"path": str(path), "contact_law": "mujoco"}})
    assert model.dt == 0.01
    worlds, rng = 1000, np.random.default_rng(23)
    m = mujoco.MjModel.from_xml_string(BIN)
    m.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON  # MuJoCo's solve to convergence, as Lockstep's
    m.opt.tolerance, m.opt.iterations = 1e-15, 1000
    qpos, qvel = bin_drops(m, worlds, rng)
    batch = lockstep.Batch(model, worlds, dtype="float64")
    batch.set_state(*model.from_mujoco(qpos, qvel))
    theirs = [mujoco.MjData(m) for _ in range(worlds)]
    for w, d in enumerate(theirs):
        d.qpos[:], d.qvel[:] = qpos[w], qvel[w]
    start = qpos[:, CENTRES].reshape(worlds, BODIES, 3)
    ours_crossing, theirs_crossing = BinCrossings(start), BinCrossings(start)
    apart_ours, apart_theirs, error = np.inf, np.inf, np.zeros(worlds)
    capsule_box = 0  # steps of worlds where the capsule touches a box
    rod = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "rod")
    for step in range(300):
        batch.evaluate()  # the contacts at the state the step starts from, as MuJoCo's d.contact
        contacts = np.array(batch.softContact).reshape(worlds, -1, _SOFT_WIDTH)
        apart_ours = min(apart_ours, np.where(contacts[:, :, 0] > 0.5, contacts[:, :, 1], np.inf).min())
        batch.step(1)
        assert not np.any(batch.status), [batch.describe_status(w) for w in np.flatnonzero(batch.status)[:3]]
        ours = np.array(batch.mujocoQpos)[:, CENTRES].reshape(worlds, BODIES, 3)
        ours_crossing.step(ours)
        for w, d in enumerate(theirs):
            mujoco.mj_step(m, d)
            error[w] = max(error[w], np.abs(ours[w].ravel() - d.qpos[CENTRES]).max())
            if d.ncon:  # the deepest contact, MuJoCo's
                apart_theirs = min(apart_theirs, d.contact.dist[:d.ncon].min())
                capsule_box += any(rod in (m.geom_bodyid[c.geom1], m.geom_bodyid[c.geom2]) and
                                   mujoco.mjtGeom.mjGEOM_BOX in (m.geom_type[c.geom1], m.geom_type[c.geom2])
                                   for c in d.contact[:d.ncon])
        theirs_crossing.step(np.array([d.qpos[CENTRES] for d in theirs]).reshape(worlds, BODIES, 3))
    followed = error < 1e-9
    print(f"bin: deepest contact {apart_ours:.4f} m (MuJoCo's {apart_theirs:.4f}); worlds off MuJoCo's "
          f"trajectory by more than 1e-9: {np.sum(~followed)}, the median {np.median(error):.1e}; "
          f"world-steps with the capsule on a box: {capsule_box}; bodies thrown over a wall: "
          f"{ours_crossing.escaped.sum()} (MuJoCo's {theirs_crossing.escaped.sum()})")
    assert ours_crossing.through == 0 and theirs_crossing.through == 0, (ours_crossing.through, theirs_crossing.through)
    assert np.array_equal(ours_crossing.escaped[followed], theirs_crossing.escaped[followed])
    assert ours_crossing.escaped.sum() < 0.01 * worlds
    assert capsule_box > 100 * worlds
    assert np.percentile(error, 99) < 1e-9, np.percentile(error, 99)
    assert abs(apart_ours - apart_theirs) < 1e-9 and apart_ours > -0.05, (apart_ours, apart_theirs)


def test_in_float_the_bin_holds_and_deep_contacts_converge(tmp_path):
    """In float32: the bin of test_boxes_balls_and_capsules_thrown_into_a_bin_stay_in_it_at_10_ms_steps
    with 1,000 worlds (other drops) for 3 s keeps every world healthy, no body passes through
    anything and no contact goes deeper than 8 cm (the same drops in float64: 6.16 cm); and a box
    turned at random up to 9 cm into the bin's floor (forces of tens of newtons on 0.4 kg, where a
    gradient rounds to about 3e-5) converges in every world, its contact forces within 1e-3 of
    float64's."""
    import lockstep
    path = tmp_path / "bin.xml"
    path.write_text(BIN)
    model = lockstep.load({"mjcf": {"path": str(path), "contact_law": "mujoco"}})
    m = mujoco.MjModel.from_xml_string(BIN)
    worlds, rng = 1000, np.random.default_rng(29)
    qpos, qvel = bin_drops(m, worlds, rng)
    batch = lockstep.Batch(model, worlds, dtype="float32")
    batch.set_state(*model.from_mujoco(qpos, qvel))
    crossings, deepest = BinCrossings(qpos[:, CENTRES].reshape(worlds, BODIES, 3)), np.inf
    for step in range(300):
        batch.evaluate()
        contacts = np.array(batch.softContact, dtype=np.float64).reshape(worlds, -1, _SOFT_WIDTH)
        deepest = min(deepest, np.where(contacts[:, :, 0] > 0.5, contacts[:, :, 1], np.inf).min())
        batch.step(1)
        assert not np.any(batch.status), (step, [batch.describe_status(w) for w in np.flatnonzero(batch.status)[:3]])
        crossings.step(np.array(batch.mujocoQpos, dtype=np.float64)[:, CENTRES].reshape(worlds, BODIES, 3))
    print(f"float bin: bodies thrown over a wall {crossings.escaped.sum()}, deepest contact {deepest:.4f} m")
    assert crossings.through == 0 and crossings.escaped.sum() < 0.01 * worlds, (crossings.through, crossings.escaped.sum())
    assert deepest > -0.08, deepest  # (these drops in float64: 6.16 cm, at the tenth step)
    deep = qpos[:64].copy()
    deep[:, 2] = rng.uniform(-0.03, 0.06, 64)  # the box's centre from 3 cm below the floor's top
    deep[:, 7:10] = [0, 0, 0.3]
    deep[:, 14:17] = [0, 0.15, 0.3]
    forces = {}
    for dtype in ("float64", "float32"):
        b = lockstep.Batch(model, 64, dtype=dtype)
        b.set_state(*model.from_mujoco(deep, np.zeros((64, m.nv))))
        b.evaluate()
        assert not np.any(b.status), [b.describe_status(w) for w in np.flatnonzero(b.status)[:3]]
        forces[dtype] = np.array(b.softContact, dtype=np.float64).reshape(64, -1, _SOFT_WIDTH)[:, :, 8:11]
    scale = np.abs(forces["float64"]).max()
    print(f"float bin: deepest contacts' largest force {scale:.1f} N, float32 off by "
          f"{np.abs(forces['float32'] - forces['float64']).max() / scale:.1e} of it")
    assert scale > 20 and np.abs(forces["float32"] - forces["float64"]).max() < 1e-3 * scale


@pytest.mark.parametrize("case", ["aligned_equal_boxes", "diamond_on_a_square"])
def test_box_contacts_at_touching_corners_are_mujocos(case, tmp_path):
    """Poses where the incident face's boundary runs through the reference rectangle's corners, 200
    each, under random turns of the whole pair: equal boxes stacked with their faces aligned (the
    corners on each other), and a box of half-width sqrt(2) s turned 45 degrees on a box of
    half-width s (its edges through the square's corners), 1 mm into each other. MuJoCo's clipping
    finds each corner once, and Lockstep's set of vertices too: each of Lockstep's points is one of
    MuJoCo's to 1e-12, four of them. Where the incident edges run along the rectangle's sides (the
    aligned boxes), MuJoCo's clipping also makes points along them as its rounding falls (a tie,
    docs/mjcf.md): there Lockstep keeps the four corners alone; elsewhere the counts are equal."""
    s = 0.1
    if case == "aligned_equal_boxes":
        upper, turn = f'type="box" size="{s} {s} .05"', 0.0
    else:
        upper, turn = f'type="box" size="{np.sqrt(2) * s} {np.sqrt(2) * s} .05"', np.pi / 4
    twin = Twin(tmp_path, scene(f'type="box" size="{s} {s} .05"', upper), law="mujoco")
    m, d = twin.m, twin.d
    a = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "a_free")]
    b = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "b_free")]
    rng = np.random.default_rng(31)
    worst, counts = 0.0, {}
    for _ in range(200):
        world = rng.standard_normal(4)
        world /= np.linalg.norm(world)
        R = np.zeros(9)
        mujoco.mju_quat2Mat(R, world)
        spin = np.array([np.cos(turn / 2), 0, 0, np.sin(turn / 2)])
        qpos, qvel = m.qpos0.copy(), np.zeros(m.nv)
        qpos[a:a + 3], qpos[a + 3:a + 7] = [0, 0, 1], world
        qpos[b:b + 3] = qpos[a:a + 3] + R.reshape(3, 3) @ [0, 0, 0.099]
        turned, unturn = np.zeros(4), np.zeros(4)  # the geom turned by spin from the first's axes
        mujoco.mju_mulQuat(turned, world, spin)
        mujoco.mju_negQuat(unturn, m.geom_quat[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "g2")])
        mujoco.mju_mulQuat(qpos[b + 3:b + 7], turned, unturn)
        twin.set_state(qpos, qvel, np.zeros(m.nu))
        theirs = np.array([np.concatenate([[c.dist], c.pos, c.frame[:3]]) for c in d.contact[:d.ncon]])
        ours = touching_points(twin)[:, 1:8]
        assert len(ours) == 4 and (len(ours) == len(theirs) or case == "aligned_equal_boxes"), (qpos, theirs, ours)
        counts[len(theirs)] = counts.get(len(theirs), 0) + 1
        for row in ours:
            worst = max(worst, np.abs(theirs - row).max(axis=1).min())
    print(f"{case}: poses by MuJoCo's number of points {counts}, worst {worst:.1e}")
    assert worst < 1e-12, worst
