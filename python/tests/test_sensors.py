"""MJCF sensors from Python (Batch.sensors, Batch.quantity) against MuJoCo's sensordata from PyPI's
mujoco (a newer MuJoCo than the Debian library the C++ test compares with), at random states of a
fixed-base arm: hinges and a slide, whose q and u are MuJoCo's qpos and qvel."""
import numpy as np
import pytest

import lockstep
from mujoco_twin import fix_quaternion_signs, mujoco

ARM = """<mujoco model="arm">
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="base" pos="0 0 .5">
      <joint name="yaw" type="hinge" axis="0 0 1" damping=".2"/>
      <geom type="cylinder" size=".05 .05" mass="2"/>
      <site name="base_site" pos="0 .02 .05" euler="0 0 30"/>
      <body name="upper" pos="0 0 .05" euler="20 0 0">
        <joint name="pitch" type="hinge" axis="0 1 0" armature=".02"/>
        <geom type="capsule" fromto="0 0 0 0 0 .4" size=".03" mass="1"/>
        <site name="imu" pos=".01 0 .2" euler="15 -20 40"/>
        <body name="fore" pos="0 0 .4">
          <joint name="reach" type="slide" axis="0 .2 1"/>
          <geom type="box" size=".02 .02 .1" pos="0 0 .1" mass=".4"/>
          <site name="wrist" pos="0 0 .2" euler="0 90 0"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator><motor joint="yaw" gear="3"/><motor joint="pitch"/></actuator>
  <sensor>
    <jointpos joint="pitch"/><jointvel joint="reach"/>
    <framepos objtype="site" objname="imu"/><framequat objtype="xbody" objname="fore"/>
    <framelinvel objtype="site" objname="wrist"/><frameangvel objtype="body" objname="upper"/>
    <velocimeter site="imu"/><gyro site="imu"/><accelerometer site="imu"/><accelerometer site="wrist"/>
    <force site="base_site"/><torque site="base_site"/><force site="wrist"/><torque site="wrist"/>
  </sensor>
</mujoco>"""


def test_sensors_equal_mujocos(tmp_path):
    path = tmp_path / "arm.xml"
    path.write_text(ARM)
    model = lockstep.load(str(path))
    names = model.sensor_names
    assert names[:4] == ["sensor0", "sensor1", "sensor2.x", "sensor2.y"] and names[5] == "sensor3.w"
    assert len(names) == 39
    assert model.quantity_components("sensors") == ["sensor." + n for n in names]
    m = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(5)
    worlds = 8
    batch = lockstep.Batch(model, worlds, dtype="float64")
    qpos = rng.uniform(-1.5, 1.5, (worlds, m.nq))
    qvel = rng.uniform(-2, 2, (worlds, m.nv))
    ctrl = rng.uniform(-1, 1, (worlds, m.nu))
    batch.set_state(qpos, qvel)
    tau = np.zeros((worlds, model.nu))
    tau[:, 0], tau[:, 1] = ctrl[:, 0], ctrl[:, 1]  # the motors' actions are their controls (gears applied inside)
    batch.tau[...] = tau
    batch.evaluate()
    ours = np.array(batch.sensors)  # the registry field: a view of the engine's memory
    assert ours.shape == (worlds, m.nsensordata)
    for w in range(worlds):
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[w], qvel[w], ctrl[w]
        mujoco.mj_forward(m, d)
        expected = fix_quaternion_signs(m, ours[w], d.sensordata)  # q and -q are one rotation
        np.testing.assert_allclose(ours[w], expected, rtol=1e-10, atol=1e-10 * max(1, np.abs(expected).max()))
    assert np.array_equal(batch.quantity("sensors"), ours)
    with pytest.raises(ValueError, match="no recordable quantity"):
        batch.quantity("nothing")
