"""Every MJCF attribute docs/mjcf.md maps, with non-default values, against PyPI's MuJoCo: one small
generated model per feature, compiled by Lockstep (through MuJoCo 2.2.2's compiler) and by MuJoCo,
put in the same random states (MuJoCo's contacts, limits and friction loss off: Lockstep's own
contact law and stops stay idle), comparing Lockstep's udot with MuJoCo's qacc, every sensor of
every site, body, geom and joint with MuJoCo's sensordata, and mujocoBody (xpos, xmat, xipos,
subtree_com, cinert, cvel, cfrc_ext) with mjData's. Each feature also names changes of its
attributes; each change, made on MuJoCo's side only, must make some comparison fail."""
import re

import pytest

from mujoco_twin import Twin, change_id, changes_of, check_equal, check_noticed, mutate, with_sensors

TOLERANCE = 1e-10  # of max(1, the largest value) in each comparison
# MuJoCo 2.2.2's compiler (Lockstep's) diagonalizes a body's inertia (a fullinertia, or geoms summed
# off its axes) to about 2e-7 of its entries (0.004 comes back as 0.0040000009), MuJoCo 4.0's to
# rounding: the two compiled models differ by that much (measured: 2.6e-7 and 1.1e-8 of the inertia;
# the principal axes, framequat of a body's inertial frame, by 1.3e-7).
TOLERANCES = {"inertial_fullinertia": 1e-6, "geoms_combined_off_axis": 1e-6}
STATES = 6


def model(bodies, actuators="", option="", flags="", compiler='angle="radian"', world="", sensors="", default=""):
    return with_sensors(f"""<mujoco model="feature">
  <compiler {compiler}/>
  <option gravity="0.4 -0.3 -9.6" timestep="0.004" {option}>{flags}</option>
  <default>{default}</default>
  <worldbody>{world}{bodies}</worldbody>
  <actuator>{actuators}</actuator>
</mujoco>""", sensors)


def arm(shoulder='type="hinge"', elbow='type="hinge"', upper="", fore="", fore_children="", base=""):
    """Two links on a tilted base: `upper` and `fore` are extra attributes of the bodies, `base` of
    the top body's frame (replacing its quaternion)."""
    base = base or 'quat=".9 .1 -.2 .3"'
    return f"""
    <body name="upper" pos=".05 -.02 1.2" {base} {upper}>
      <joint name="shoulder" axis=".3 1 .2" pos=".01 0 .02" {shoulder}/>
      <geom name="upper_geom" type="capsule" fromto="0 0 0 .35 0 -.1" size=".04"/>
      <site name="upper_site" pos=".1 .02 0" euler=".3 -.2 .5"/>
      <body name="fore" pos=".35 0 -.1" euler=".2 .4 -.3" {fore}>
        <joint name="elbow" axis="1 .2 -.4" {elbow}/>
        <geom name="fore_geom" type="box" size=".03 .04 .12" pos="0 0 -.1" euler="0 .3 0"/>
        <site name="wrist" pos=".02 0 -.22" euler="0 1.2 .3"/>
        {fore_children}
      </body>
    </body>"""


# Welded children: bodies without joints at rotated and offset frames, with geoms, sites and an
# explicit inertial, one inside the other; a static body on the world body with a site, and a moving
# body below it.
WELDED = """
        <body name="hand" pos=".03 -.02 -.26" quat=".7 .2 .5 -.3">
          <geom name="palm" type="box" size=".04 .02 .03" pos=".01 .02 0" euler=".5 0 .2" mass=".3"/>
          <site name="palm_site" pos=".02 .01 .03" euler="0 -.4 .9"/>
          <body name="finger" pos=".05 0 .02" euler="1 -.5 .2">
            <inertial pos=".01 .02 -.01" quat=".8 0 .6 0" mass=".15" diaginertia=".002 .001 .0015"/>
            <geom name="finger_geom" type="capsule" fromto="0 0 0 .06 .01 0" size=".01" mass="0"/>
            <site name="fingertip" pos=".07 .01 0" quat="0 1 0 0"/>
          </body>
        </body>"""
STATIC = """
    <body name="mount" pos=".4 .3 .8" euler=".3 .1 -.6">
      <site name="mount_site" pos=".05 0 .1" euler="0 .2 0"/>
      <body name="pendulum" pos=".1 .05 0" euler="0 .5 .2">
        <joint name="swing" type="hinge" axis="0 1 .3"/>
        <geom name="bob" type="sphere" size=".05" pos="0 0 -.3" mass=".7"/>
        <site name="bob_site" pos="0 .01 -.3"/>
      </body>
    </body>"""
FREE = """
    <body name="torso" pos=".1 .2 1.5" euler=".2 -.3 .1">
      <joint name="root" type="free"/>
      <geom name="torso_geom" type="ellipsoid" size=".15 .1 .08" density="800"/>
      <site name="torso_site" pos=".05 0 .03" euler=".1 .2 .3"/>
      <body name="leg" pos=".12 0 -.05" euler="0 .6 0">
        <joint name="hip" type="hinge" axis="0 1 .2"/>
        <geom name="leg_geom" type="cylinder" fromto="0 0 0 0 .02 -.3" size=".03"/>
        <site name="foot" pos="0 .02 -.3"/>
      </body>
    </body>"""
# A body whose geoms' axes are its own (their summed inertia is diagonal: no compiler's
# diagonalization between Lockstep's MuJoCo 2.2.2 and MuJoCo 4.0), with a mass and two densities.
WEIGHTS = """
        <body name="weights" pos="0 .05 -.25">
          <joint name="wrist_slide" type="slide" axis=".2 1 0"/>
          <geom name="plate" type="box" size=".05 .04 .03" mass=".6"/>
          <geom name="ball" type="sphere" size=".03" pos="0 0 -.08" density="3000"/>
          <geom name="rod" type="cylinder" size=".01 .06" pos="0 0 .06" density="900"/>
        </body>"""
# Cutoffs that clip: each sensor's values are clamped to [-cutoff, cutoff] (MuJoCo's compiler refuses
# one on a quaternion).
CUTOFFS = ('<jointpos joint="shoulder" cutoff=".2"/><jointvel joint="elbow" cutoff=".5"/>'
           '<framepos objtype="site" objname="wrist" cutoff=".3"/>'
           '<framelinvel objtype="body" objname="fore" cutoff=".4"/><gyro site="upper_site" cutoff=".6"/>'
           '<accelerometer site="wrist" cutoff="3"/><force site="wrist" cutoff=".7"/>'
           '<torque site="upper_site" cutoff=".15"/><subtreecom body="upper" cutoff=".27"/>'
           '<subtreelinvel body="fore" cutoff=".35"/>')
MOTOR = '<motor name="m" joint="shoulder" gear="-2.5" ctrllimited="true" ctrlrange="-.7 1.1"/>'
POSITION = ('<position joint="shoulder" kp="12" gear="1.7" ctrllimited="true" ctrlrange="-1 1.5"/>'
            '<position joint="elbow" kp="4" gear="-.8" forcelimited="true" forcerange="-2 2"/>')
VELOCITY = ('<velocity joint="shoulder" kv="3" gear="-1.6"/><general joint="elbow" gainprm="2.5" biastype="affine" '
            'biasprm="0 0 -2.5" gear=".6" forcelimited="true" forcerange="-2 2"/>')
FRAMES = (arm(base='euler="20 -35 50"', fore='xyaxes="1 .2 0 -.1 1 .3"').replace('euler=".2 .4 -.3"', "")
          .replace('euler=".3 -.2 .5"', 'euler="15 -10 30"').replace('euler="0 1.2 .3"', 'axisangle="1 1 0 40"')
          .replace('euler="0 .3 0"', 'zaxis=".2 .3 1"'))
OFF_AXIS = arm().replace('size=".04"/>', 'size=".04" mass="1.3"/><geom name="weight" type="sphere" size=".03" '
                         'pos=".05 .05 -.02" density="5000"/>')


def with_inertial(inertial):
    inertial = f'<inertial pos=".01 -.02 -.1" mass=".8" {inertial}/>'
    return arm().replace('<joint name="elbow"', inertial + '<joint name="elbow"')


# id -> (xml, the attributes to change on MuJoCo's side only: mujoco_twin.change's specs).
FEATURES = {
    "hinge_axis_and_anchor": (model(arm()), ['axis=".3 1 .2"', 'pos=".01 0 .02"']),
    "hinge_ref": (model(arm(shoulder='type="hinge" ref=".4"', elbow='type="hinge" ref="-.7"')),
                  ['ref=".4"', 'ref="-.7"']),
    "hinge_stiffness_springref": (model(arm(shoulder='type="hinge" ref=".3" stiffness="7" springref="-.6"')),
                                  ['springref="-.6"', 'stiffness="7"']),
    "hinge_damping_armature": (model(arm(shoulder='type="hinge" damping=".8" armature=".05"',
                                         elbow='type="hinge" damping=".3" armature=".01"')),
                               ['damping=".8"', 'armature=".01"']),
    "slide_axis_ref_spring_damping_armature": (
        model(arm(elbow='type="slide" pos=".2 .1 0" ref=".05" stiffness="30" springref="-.1" damping=".4" '
                        'armature=".02"')),
        ['axis="1 .2 -.4"', 'ref=".05"', 'springref="-.1"', 'stiffness="30"', 'damping=".4"', 'armature=".02"']),
    "ball_anchor_damping_armature": (model(arm(elbow='type="ball" pos=".01 .02 0" damping=".3" armature=".04"')),
                                     ['pos=".01 .02 0"', 'damping=".3"', 'armature=".04"']),
    "free_joint_damping_armature": (model(FREE.replace('name="root"', 'name="root" damping=".2" armature=".03"')),
                                    ['damping=".2"', 'armature=".03"']),
    "several_joints_in_one_body": (
        model(arm(elbow='type="hinge"/><joint name="twist" type="slide" axis="0 .3 1" ref=".02" damping=".1"/>'
                        '<joint name="roll" type="hinge" axis=".5 .5 0" pos="0 .01 .02" stiffness="2"')),
        ['axis="0 .3 1"', 'axis=".5 .5 0"', 'pos="0 .01 .02"']),
    "body_frames_euler_sequence_degrees": (
        model(FRAMES, compiler='angle="degree" eulerseq="zyx"'),
        [('eulerseq="zyx"', 'eulerseq="xyz"'), 'xyaxes="1 .2 0 -.1 1 .3"', 'axisangle="1 1 0 40"', 'zaxis=".2 .3 1"',
         'euler="20 -35 50"']),
    "geom_mass_and_density_combined": (model(arm(fore_children=WEIGHTS)),
                                       ['mass=".6"', 'density="3000"', 'density="900"', 'size=".05 .04 .03"']),
    "geoms_combined_off_axis": (model(OFF_AXIS), ['mass="1.3"', 'density="5000"']),
    "inertial_pos_quat_diaginertia": (model(with_inertial('quat=".9 .3 .1 .2" diaginertia=".004 .005 .003"')),
                                      ['pos=".01 -.02 -.1"', 'quat=".9 .3 .1 .2"', 'mass=".8"',
                                       'diaginertia=".004 .005 .003"']),
    "inertial_fullinertia": (model(with_inertial('fullinertia=".004 .005 .003 .0004 -.0002 .0003"')),
                             ['fullinertia=".004 .005 .003 .0004 -.0002 .0003"']),
    "welded_child_bodies_rotated_and_offset": (
        model(arm(fore_children=WELDED), world=STATIC),
        ['quat=".7 .2 .5 -.3"', 'euler="1 -.5 .2"', 'pos=".01 .02 0" euler=".5 0 .2"', 'diaginertia=".002 .001 .0015"',
         'euler=".3 .1 -.6"', 'pos=".05 0 .02"']),
    "unnamed_bodies_and_joints": (model(arm().replace('name="upper" ', "").replace('name="elbow" ', "")),
                                  ['axis="1 .2 -.4"']),
    "defaults_and_childclass": (
        model(arm(upper='childclass="limb"'), default='<default class="limb"><joint damping=".6" armature=".03" '
              'stiffness="4" springref=".2"/><geom density="700"/></default>'),
        ['damping=".6"', 'density="700"', 'springref=".2"']),
    "sensor_cutoff": (model(arm(), sensors=CUTOFFS), re.findall(r'cutoff="[^"]+"', CUTOFFS)),
    "gravity": (model(arm()), ['gravity="0.4 -0.3 -9.6"']),
    "motor_gear_ctrlrange": (model(arm(), MOTOR), ['gear="-2.5"', 'ctrlrange="-.7 1.1"']),
    "motor_forcerange": (model(arm(), '<motor joint="elbow" gear="3" forcelimited="true" forcerange="-.8 .8"/>'),
                         [('forcerange="-.8 .8"', 'forcerange="-.9 .9"')]),
    "position_servo_kp_gear_forcerange": (model(arm(), POSITION), ['kp="12"', 'gear="1.7"', 'gear="-.8"',
                                                                   ('forcerange="-2 2"', 'forcerange="-1.9 1.9"')]),
    "position_servo_with_kv_as_general": (
        model(arm(), '<general joint="shoulder" gainprm="9" biastype="affine" biasprm="0 -9 -1.3" gear="2.2"/>'),
        ['biasprm="0 -9 -1.3"', 'gear="2.2"']),
    "velocity_servo_kv_gear": (model(arm(), VELOCITY), ['kv="3"', 'gear="-1.6"', 'biasprm="0 0 -2.5"',
                                                        ('forcerange="-2 2"', 'forcerange="-1.5 1.5"')]),
    "flag_gravity_disabled": (model(arm(), flags='<flag gravity="disable"/>'), ['gravity="disable"']),
    "flag_passive_disabled": (model(arm(shoulder='type="hinge" stiffness="5" springref=".3" damping="2"'),
                                    flags='<flag passive="disable"/>'), ['passive="disable"']),
    "flag_actuation_disabled": (model(arm(), MOTOR + '<position joint="elbow" kp="5"/>',
                                      flags='<flag actuation="disable"/>'), ['actuation="disable"']),
    "flag_clampctrl_disabled": (model(arm(), MOTOR, flags='<flag clampctrl="disable"/>'), ['clampctrl="disable"']),
    "flag_equality_disabled": (model(arm(), flags='<flag equality="disable"/>').replace(
        "</actuator>", '</actuator><equality><joint joint1="shoulder" joint2="elbow"/></equality>'),
        ['equality="disable"']),
    "static_body_mass_in_the_worlds_subtree": (
        model(arm(), world=STATIC.replace('<site name="mount_site"', '<inertial pos=".1 0 0" mass="3" '
                                          'diaginertia=".1 .1 .1"/><site name="mount_site"')),
        ['mass="3"']),
}


@pytest.mark.parametrize("feature", FEATURES)
def test_mjcf_feature_equals_mujoco(feature, tmp_path):
    twin = Twin(tmp_path, FEATURES[feature][0])
    # (Limbs that MuJoCo's rules let touch each other are warned about under the compliant law's
    # explicit step, which has no contacts between bodies: not a feature of the file left out.)
    warnings = [w for w in twin.model.warnings if "between moving" not in w]
    assert not warnings, warnings
    check_equal(feature, twin, TOLERANCES.get(feature, TOLERANCE), STATES)


@pytest.mark.parametrize("feature,change", changes_of(FEATURES), ids=change_id)
def test_mjcf_feature_change_on_mujocos_side_is_noticed(feature, change, tmp_path):
    xml = FEATURES[feature][0]
    twin = Twin(tmp_path, xml, mujoco_xml=mutate(xml, *change))
    check_noticed(feature, change, twin, TOLERANCES.get(feature, TOLERANCE), STATES)
