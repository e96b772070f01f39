"""Gymnasium's MuJoCo v5 tasks as Lockstep vector environments (docs/environments.md).

    import gymnasium as gym, lockstep
    envs = gym.make_vec("lockstep/Ant-v5", num_envs=4096)          # registered by `import lockstep`
    obs, info = envs.reset(seed=0)
    obs, reward, terminated, truncated, info = envs.step(envs.action_space.sample())

Each task loads Gymnasium's own XML through MuJoCo's compiler (lockstep.load of an .xml) and has
the observation and action spaces, rewards, termination rules, reset noise, frame_skip and keyword
arguments of Gymnasium's v5 environment. Every quantity MuJoCo's `data` would give (qpos, qvel,
xpos, xipos, cinert, cvel, cfrc_ext, qfrc_actuator, site_xpos) is computed for all worlds at once
from the engine's registry fields (mujocoQpos, mujocoQvel, mujocoBody, actuator, stopForce), as
arrays of shape (num_envs, ...): NumPy arrays on the CPU, torch tensors in device memory on CUDA
(or on the CPU with array="torch"). There is no per-world Python.

By default (contact_law="mujoco") a task has MuJoCo's own contacts and limits, solved in every world,
and steps as Gymnasium's MuJoCo does (the XML's timestep and integrator): observations, rewards and
terminations equal Gymnasium's. Differences (docs/environments.md has each): reset noise on a free
joint's orientation is a rotation (tangent space), not noise added to the quaternion's components;
the solve converges where Humanoid's XML asks MuJoCo for 50 PGS iterations. contact_law="compliant"
gives Lockstep's compliant sphere-on-half-space contacts and joint stops, in RK4 substeps.

Each task here defines only its observation, reward, termination and reset noise. The rest lives in
its own module: lockstep.mujoco_task (the task base: XML, spaces, actions, initial state),
lockstep.mujoco_state (MuJoCo's quantities from the engine's fields), lockstep.episodes (the episode
rules every vector environment shares) and lockstep.arrays (NumPy or torch).
"""
from __future__ import annotations

import functools

import numpy as np
import gymnasium as gym

from .episodes import OneWorldEnv
from .mujoco_state import MujocoState
from .mujoco_task import ASSETS, MujocoTaskEnv, TaskSpec

__all__ = ["AntEnv", "HalfCheetahEnv", "HopperEnv", "Walker2dEnv", "HumanoidEnv", "InvertedDoublePendulumEnv",
           "ReacherEnv", "PusherEnv", "TASKS", "make", "make_one", "register", "MujocoTaskEnv", "MujocoState",
           "TaskSpec", "ASSETS"]

_SIDE_VIEW = {"azimuth": 90.0, "elevation": -10.0}  # the planar tasks, seen across their plane

# Each task names gym.vector.VectorEnv among its own bases again (it is one through MujocoTaskEnv
# already): skrl's wrap_env(env, wrapper="auto") looks for a gymnasium class among the direct bases
# of the environment's class only.


def _norm(x, xp):
    """The Euclidean norm of each row (Gymnasium's distance_from_origin: of qpos[0:2])."""
    return xp.sqrt(xp.sum(x * x, 1))


def _healthy_range(x, bounds, inclusive):
    lo, hi = bounds
    return (x >= lo) & (x <= hi) if inclusive else (x > lo) & (x < hi)


class AntEnv(MujocoTaskEnv, gym.vector.VectorEnv):
    spec_ = TaskSpec("Ant-v5", "ant.xml", 5, 1e-3, 1000, dict(
        forward_reward_weight=1.0, ctrl_cost_weight=0.5, contact_cost_weight=5e-4, healthy_reward=1.0,
        main_body=1, terminate_when_unhealthy=True, healthy_z_range=(0.2, 1.0), contact_force_range=(-1.0, 1.0),
        reset_noise_scale=0.1, exclude_current_positions_from_observation=True,
        include_cfrc_ext_in_observation=True))

    def _main(self):
        b = self._options["main_body"]
        return b if isinstance(b, (int, np.integer)) else self.state.body_names.index(b)

    def _contact_forces(self):
        lo, hi = self._options["contact_force_range"]
        return self.xp.clip(self.state.contact_forces(), lo, hi)

    def _observe(self):
        o, xp = self._options, self.xp
        qpos = self.state.qpos()
        parts = [qpos[:, 2:] if o["exclude_current_positions_from_observation"] else qpos, self.state.qvel()]
        if o["include_cfrc_ext_in_observation"]:
            f = self._contact_forces()
            parts.append(f[:, 1:].reshape(f.shape[0], -1))
        return xp.cat(parts, axis=1)

    def _progress(self):
        return self.state.xpos()[:, self._main(), 0:2]

    def _healthy(self):
        o, xp = self._options, self.xp
        qpos, qvel = self.state.qpos(), self.state.qvel()
        finite = xp.all(xp.isfinite(qpos), 1) & xp.all(xp.isfinite(qvel), 1)
        return finite & _healthy_range(qpos[:, 2], o["healthy_z_range"], inclusive=True)

    def _reward(self, before, ctrl):
        o, xp = self._options, self.xp
        v = (self.state.xpos()[:, self._main(), 0:2] - before) / self.dt
        healthy = self._healthy()
        forward = v[:, 0] * o["forward_reward_weight"]
        survive = healthy * o["healthy_reward"]
        ctrl_cost = o["ctrl_cost_weight"] * xp.sum(ctrl * ctrl, 1)
        f = self._contact_forces()
        contact_cost = o["contact_cost_weight"] * xp.sum(f.reshape(f.shape[0], -1) ** 2, 1)
        reward = forward + survive - ctrl_cost - contact_cost
        terminated = ~healthy if o["terminate_when_unhealthy"] else healthy & False
        qpos = self.state.qpos()
        info = {"x_position": qpos[:, 0], "y_position": qpos[:, 1], "distance_from_origin": _norm(qpos[:, 0:2], xp),
                "x_velocity": v[:, 0], "y_velocity": v[:, 1], "reward_forward": forward, "reward_ctrl": -ctrl_cost,
                "reward_contact": -contact_cost, "reward_survive": survive}
        return reward, terminated, info

    def _noise(self, qpos, qvel, rng):
        s = self._options["reset_noise_scale"]
        qpos = self._tangent_noise(qpos, s, rng)
        return qpos, qvel + s * rng.standard_normal(qvel.shape)


class HalfCheetahEnv(MujocoTaskEnv, gym.vector.VectorEnv):
    spec_ = TaskSpec("HalfCheetah-v5", "half_cheetah.xml", 5, 1e-3, 1000, dict(
        forward_reward_weight=1.0, ctrl_cost_weight=0.1, reset_noise_scale=0.1,
        exclude_current_positions_from_observation=True), camera=_SIDE_VIEW)

    def _observe(self):
        qpos = self.state.qpos()
        skip = 1 if self._options["exclude_current_positions_from_observation"] else 0
        return self.xp.cat([qpos[:, skip:], self.state.qvel()], axis=1)

    def _progress(self):
        return self.state.qpos()[:, 0]

    def _reward(self, before, ctrl):
        o, xp = self._options, self.xp
        x = self.state.qpos()[:, 0]
        v = (x - before) / self.dt
        forward = o["forward_reward_weight"] * v
        ctrl_cost = o["ctrl_cost_weight"] * xp.sum(ctrl * ctrl, 1)
        info = {"x_position": x, "x_velocity": v, "reward_forward": forward, "reward_ctrl": -ctrl_cost}
        return forward - ctrl_cost, forward != forward, info  # never terminates (NaN is flagged)

    def _noise(self, qpos, qvel, rng):
        s = self._options["reset_noise_scale"]
        return self._tangent_noise(qpos, s, rng), qvel + s * rng.standard_normal(qvel.shape)


class _PlanarWalker(MujocoTaskEnv):
    """Hopper and Walker2d: rootx, rootz, rooty, clipped velocities, healthy z and angle."""

    def _observe(self):
        qpos = self.state.qpos()
        skip = 1 if self._options["exclude_current_positions_from_observation"] else 0
        return self.xp.cat([qpos[:, skip:], self.xp.clip(self.state.qvel(), -10.0, 10.0)], axis=1)

    def _progress(self):
        return self.state.qpos()[:, 0]

    def _healthy(self, qpos, qvel):
        o, xp = self._options, self.xp
        healthy = _healthy_range(qpos[:, 1], o["healthy_z_range"], False) & \
            _healthy_range(qpos[:, 2], o["healthy_angle_range"], False)
        if "healthy_state_range" in o:
            state = xp.cat([qpos, qvel], axis=1)[:, 2:]
            healthy = healthy & xp.all(_healthy_range(state, o["healthy_state_range"], False), 1)
        return healthy

    def _reward(self, before, ctrl):
        o, xp = self._options, self.xp
        qpos, qvel = self.state.qpos(), self.state.qvel()
        v = (qpos[:, 0] - before) / self.dt
        healthy = self._healthy(qpos, qvel)
        forward = o["forward_reward_weight"] * v
        survive = healthy * o["healthy_reward"]
        ctrl_cost = o["ctrl_cost_weight"] * xp.sum(ctrl * ctrl, 1)
        terminated = ~healthy if o["terminate_when_unhealthy"] else healthy & False
        info = {"x_position": qpos[:, 0], "z_distance_from_origin": qpos[:, 1] - self.init_qpos[1],
                "x_velocity": v, "reward_forward": forward, "reward_ctrl": -ctrl_cost, "reward_survive": survive}
        return forward + survive - ctrl_cost, terminated, info

    def _noise(self, qpos, qvel, rng):
        s = self._options["reset_noise_scale"]
        return self._tangent_noise(qpos, s, rng), qvel + rng.uniform(-s, s, qvel.shape)


class HopperEnv(_PlanarWalker, gym.vector.VectorEnv):
    spec_ = TaskSpec("Hopper-v5", "hopper.xml", 4, 5e-4, 1000, dict(
        forward_reward_weight=1.0, ctrl_cost_weight=1e-3, healthy_reward=1.0, terminate_when_unhealthy=True,
        healthy_state_range=(-100.0, 100.0), healthy_z_range=(0.7, float("inf")), healthy_angle_range=(-0.2, 0.2),
        reset_noise_scale=5e-3, exclude_current_positions_from_observation=True), camera=_SIDE_VIEW)


class Walker2dEnv(_PlanarWalker, gym.vector.VectorEnv):
    spec_ = TaskSpec("Walker2d-v5", "walker2d_v5.xml", 4, 5e-4, 1000, dict(
        forward_reward_weight=1.0, ctrl_cost_weight=1e-3, healthy_reward=1.0, terminate_when_unhealthy=True,
        healthy_z_range=(0.8, 2.0), healthy_angle_range=(-1.0, 1.0), reset_noise_scale=5e-3,
        exclude_current_positions_from_observation=True), camera=_SIDE_VIEW)


class HumanoidEnv(MujocoTaskEnv, gym.vector.VectorEnv):
    spec_ = TaskSpec("Humanoid-v5", "humanoid.xml", 5, 2.5e-4, 1000, dict(
        forward_reward_weight=1.25, ctrl_cost_weight=0.1, contact_cost_weight=5e-7,
        contact_cost_range=(-float("inf"), 10.0), healthy_reward=5.0, terminate_when_unhealthy=True,
        healthy_z_range=(1.0, 2.0), reset_noise_scale=1e-2, exclude_current_positions_from_observation=True,
        include_cinert_in_observation=True, include_cvel_in_observation=True,
        include_qfrc_actuator_in_observation=True, include_cfrc_ext_in_observation=True))

    def _observe(self):
        o, xp, s = self._options, self.xp, self.state
        qpos = s.qpos()
        parts = [qpos[:, 2:] if o["exclude_current_positions_from_observation"] else qpos, s.qvel()]
        n = qpos.shape[0]
        if o["include_cinert_in_observation"] or o["include_cvel_in_observation"] or o["include_cfrc_ext_in_observation"]:
            xmat, _, xipos = s.frames()
            c = s.subtree_com(xipos)
            if o["include_cinert_in_observation"]:
                parts.append(s.cinert(xmat, xipos, c)[:, 1:].reshape(n, -1))
            if o["include_cvel_in_observation"]:
                parts.append(s.cvel(c)[:, 1:].reshape(n, -1))
        if o["include_qfrc_actuator_in_observation"]:
            parts.append(s.dof_forces("actuator")[:, 6:])
        if o["include_cfrc_ext_in_observation"]:
            parts.append(s.contact_forces()[:, 1:].reshape(n, -1))
        return xp.cat(parts, axis=1)

    def _progress(self):
        return self.state.mass_center(self.state.frames()[2])[:, 0:2]

    def _reward(self, before, ctrl):
        o, xp, s = self._options, self.xp, self.state
        _, _, xipos = s.frames()
        v = (s.mass_center(xipos)[:, 0:2] - before) / self.dt
        qpos = s.qpos()
        healthy = _healthy_range(qpos[:, 2], o["healthy_z_range"], False)
        forward = o["forward_reward_weight"] * v[:, 0]
        survive = healthy * o["healthy_reward"]
        ctrl_cost = o["ctrl_cost_weight"] * xp.sum(ctrl * ctrl, 1)
        f = s.contact_forces()
        contact_cost = xp.clip(o["contact_cost_weight"] * xp.sum(f.reshape(f.shape[0], -1) ** 2, 1),
                               *o["contact_cost_range"])
        terminated = ~healthy if o["terminate_when_unhealthy"] else healthy & False
        info = {"x_position": qpos[:, 0], "y_position": qpos[:, 1], "distance_from_origin": _norm(qpos[:, 0:2], xp),
                "x_velocity": v[:, 0], "y_velocity": v[:, 1], "reward_survive": survive, "reward_forward": forward,
                "reward_ctrl": -ctrl_cost, "reward_contact": -contact_cost}
        return forward + survive - ctrl_cost - contact_cost, terminated, info

    def _noise(self, qpos, qvel, rng):
        s = self._options["reset_noise_scale"]
        return self._tangent_noise(qpos, s, rng), qvel + rng.uniform(-s, s, qvel.shape)


class InvertedDoublePendulumEnv(MujocoTaskEnv, gym.vector.VectorEnv):
    spec_ = TaskSpec("InvertedDoublePendulum-v5", "inverted_double_pendulum.xml", 5, 1e-2, 1000, dict(
        healthy_reward=10.0, reset_noise_scale=0.1), camera=_SIDE_VIEW)

    def _observe(self):
        xp, s = self.xp, self.state
        qpos, qvel = s.qpos(), s.qvel()
        constraint = xp.clip(s.dof_forces("stopForce"), -10.0, 10.0)  # the cart's stop: MuJoCo's limit force
        return xp.cat([qpos[:, :1], xp.sin(qpos[:, 1:]), xp.cos(qpos[:, 1:]), xp.clip(qvel, -10.0, 10.0),
                       constraint[:, :1]], axis=1)

    def _reward(self, before, ctrl):
        tip = self.state.site_xpos("tip")
        x, y = tip[:, 0], tip[:, 2]
        qvel = self.state.qvel()
        v1, v2 = qvel[:, 1], qvel[:, 2]
        terminated = y <= 1
        dist = 0.01 * x ** 2 + (y - 2) ** 2
        vel = 1e-3 * v1 ** 2 + 5e-3 * v2 ** 2
        alive = self._options["healthy_reward"] * (~terminated)
        info = {"reward_survive": alive, "distance_penalty": -dist, "velocity_penalty": -vel}
        return alive - dist - vel, terminated, info

    def _noise(self, qpos, qvel, rng):
        s = self._options["reset_noise_scale"]
        return self._tangent_noise(qpos, s, rng), qvel + s * rng.standard_normal(qvel.shape)


class ReacherEnv(MujocoTaskEnv, gym.vector.VectorEnv):
    spec_ = TaskSpec("Reacher-v5", "reacher.xml", 2, 1e-3, 50, dict(reward_dist_weight=1.0, reward_control_weight=1.0),
                     camera={"azimuth": 90.0, "elevation": -90.0})

    def _vec(self):
        _, xpos, _ = self.state.frames()
        names = self.state.body_names
        return xpos[:, names.index("fingertip")] - xpos[:, names.index("target")]

    def _observe(self):
        xp, qpos = self.xp, self.state.qpos()
        theta = qpos[:, :2]
        return xp.cat([xp.cos(theta), xp.sin(theta), qpos[:, 2:], self.state.qvel()[:, :2], self._vec()[:, :2]], axis=1)

    def _reward(self, before, ctrl):
        o, xp = self._options, self.xp
        vec = self._vec()
        dist = -xp.sqrt(xp.sum(vec * vec, 1)) * o["reward_dist_weight"]
        control = -xp.sum(ctrl * ctrl, 1) * o["reward_control_weight"]
        return dist + control, dist != dist, {"reward_dist": dist, "reward_ctrl": control}

    def _noise(self, qpos, qvel, rng):
        k = qpos.shape[0]
        qpos = rng.uniform(-0.1, 0.1, qpos.shape) + qpos
        goal = np.zeros((k, 2))
        todo = np.ones(k, dtype=bool)
        while todo.any():  # Gymnasium's rejection sampling, for every world at once: each world's
            g = rng.uniform(-0.2, 0.2, (k, 2))  # candidates are its own stream's, whatever the others'
            ok = todo & (np.linalg.norm(g, axis=1) < 0.2)
            goal[ok] = g[ok]
            todo &= ~ok
        qpos[:, -2:] = goal
        qvel = qvel + rng.uniform(-0.005, 0.005, qvel.shape)
        qvel[:, -2:] = 0
        return qpos, qvel


class PusherEnv(MujocoTaskEnv, gym.vector.VectorEnv):
    """An arm pushing a free cylinder (sliding on the table) to a goal: its fingers' capsules against
    the cylinder are pair contacts, so only MuJoCo's law has them (contact_law="compliant" is refused)."""
    spec_ = TaskSpec("Pusher-v5", "pusher_v5.xml", 5, 1e-2, 100, dict(
        reward_near_weight=0.5, reward_dist_weight=1.0, reward_control_weight=0.1),
        camera={"azimuth": 135.0, "elevation": -35.0}, laws=("mujoco",))

    def _com(self):
        """get_body_com of the fingertips, the object and the goal: their bodies' xpos [n, 3] each."""
        xpos, names = self.state.xpos(), self.state.body_names
        return tuple(xpos[:, names.index(b)] for b in ("tips_arm", "object", "goal"))

    def _observe(self):
        xp, qpos, qvel = self.xp, self.state.qpos(), self.state.qvel()
        return xp.cat([qpos[:, :7], qvel[:, :7], *self._com()], axis=1)

    def _reward(self, before, ctrl):
        o, xp = self._options, self.xp
        tips, obj, goal = self._com()
        near = -_norm(obj - tips, xp) * o["reward_near_weight"]
        dist = -_norm(obj - goal, xp) * o["reward_dist_weight"]
        control = -xp.sum(ctrl * ctrl, 1) * o["reward_control_weight"]
        return dist + control + near, dist != dist, {"reward_dist": dist, "reward_ctrl": control, "reward_near": near}

    def _noise(self, qpos, qvel, rng):
        k = qpos.shape[0]
        cylinder = np.zeros((k, 2))
        todo = np.ones(k, dtype=bool)
        while todo.any():  # Gymnasium's rejection sampling, every world at once on its own stream
            c = rng.uniform(np.array([-0.3, -0.2]), np.array([0.0, 0.2]), (k, 2))
            ok = todo & (np.linalg.norm(c, axis=1) > 0.17)  # the goal at (0, 0)
            cylinder[ok] = c[ok]
            todo &= ~ok
        qpos = qpos.copy()
        qpos[:, -4:-2] = cylinder
        qpos[:, -2:] = 0.0
        qvel = qvel + rng.uniform(-0.005, 0.005, qvel.shape)
        qvel[:, -4:] = 0
        return qpos, qvel


TASKS = {cls.spec_.name: cls for cls in (AntEnv, HalfCheetahEnv, HopperEnv, Walker2dEnv, HumanoidEnv,
                                         InvertedDoublePendulumEnv, ReacherEnv, PusherEnv)}


def make(task: str, num_envs: int = 1, **kwargs) -> MujocoTaskEnv:
    """The vector environment of a task by its Gymnasium name ("Ant-v5", ...), as gymnasium.make_vec
    ("lockstep/Ant-v5", num_envs=...) makes it."""
    if task not in TASKS:
        raise ValueError(f"no task named {task!r}; the tasks are {', '.join(TASKS)}")
    return TASKS[task](num_envs=num_envs, **kwargs)


def make_one(task: str, **kwargs) -> OneWorldEnv:
    """The task as a gymnasium.Env of one world, as gymnasium.make("lockstep/Ant-v5", ...) makes it
    (lockstep.episodes.OneWorldEnv); keywords as the vector environment's."""
    return OneWorldEnv(make(task, num_envs=1, **kwargs))


def register() -> None:
    """Registers lockstep/<task> with Gymnasium for every task: gymnasium.make_vec gives the vector
    environment, gymnasium.make one world of it (a gymnasium.Env). Each truncates its episodes itself
    (max_episode_steps), so Gymnasium adds no TimeLimit."""
    for name, cls in TASKS.items():
        env_id = f"lockstep/{name}"
        if env_id in gym.registry:
            continue
        gym.register(id=env_id, entry_point=functools.partial(make_one, name),
                     vector_entry_point=f"lockstep.tasks:{cls.__name__}", max_episode_steps=None, kwargs={})
