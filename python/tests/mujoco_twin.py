"""One MJCF text compiled twice, by Lockstep (lockstep.load, through MuJoCo's compiler) and by PyPI's
mujoco, put in the same states and compared: accelerations (Lockstep's udot against MuJoCo's qacc
in Lockstep's coordinates), sensordata, MuJoCo's per-body quantities (xpos, xmat, xipos,
subtree_com, cinert, cvel, cfrc_ext), geom poses (from the sensors on geoms) and, under MuJoCo's
contact law, every contact point and its force (softContact against d.contact and
mj_contactForce). The MuJoCo side may be given a different text (a changed attribute) to check
that a comparison notices it."""
from __future__ import annotations

import re

import numpy as np
import pytest

import lockstep

mujoco = pytest.importorskip("mujoco")

_BODY_PARTS = {"xpos": (0, 3), "xmat": (3, 12), "xipos": (12, 15), "subtree_com": (15, 18),
               "cinert": (18, 28), "cvel": (28, 34), "cfrc_ext": (34, 40)}
_ACCELERATION_SENSORS = tuple(int(k) for k in (mujoco.mjtSensor.mjSENS_ACCELEROMETER, mujoco.mjtSensor.mjSENS_FORCE,
                                               mujoco.mjtSensor.mjSENS_TORQUE))
_SOFT_WIDTH = 20  # active, dist, pos (3), normal (3), force (normal, t1, t2), force in Ground (3), torque (n, t1, t2),
#                 torque in Ground (3)


def fix_quaternion_signs(m, ours, expected):
    """expected with each framequat sensor's sign flipped where ours is its negative (q and -q are
    one rotation)."""
    expected = expected.copy()
    for s in range(m.nsensor):
        if m.sensor_type[s] == mujoco.mjtSensor.mjSENS_FRAMEQUAT:
            a = m.sensor_adr[s]
            if np.dot(ours[a:a + 4], expected[a:a + 4]) < 0:
                expected[a:a + 4] *= -1
    return expected


# MuJoCo 2.2.2's spellings (Lockstep's compiler) that PyPI's MuJoCo spells otherwise.
_SPELLINGS = {'passive="disable"': 'spring="disable" damper="disable"', 'passive="enable"': ""}


def mujoco_spelling(xml: str) -> str:
    """xml as PyPI's MuJoCo reads it (MuJoCo 3 split the passive flag into spring and damper)."""
    for old, new in _SPELLINGS.items():
        xml = xml.replace(old, new)
    return xml


def with_sensors(xml: str, extra: str = "") -> str:
    """xml with a <sensor> block reading every named site, body, geom and hinge or slide in every way
    Lockstep computes (force and torque at sites of bodies with joints of their own; subtree sensors
    of bodies with joints and of the world body), then `extra`."""
    m = mujoco.MjModel.from_xml_string(mujoco_spelling(xml))
    frame = ("framepos", "framequat", "framelinvel", "frameangvel")
    out = []
    for j in range(m.njnt):
        joint = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
        if joint and m.jnt_type[j] in (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE):
            out += [f'<jointpos joint="{joint}"/>', f'<jointvel joint="{joint}"/>']
    for s in range(m.nsite):
        site = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_SITE, s)
        if site:
            kinds = ["velocimeter", "gyro", "accelerometer"]
            kinds += ["force", "torque"] if m.body_jntnum[m.site_bodyid[s]] else []
            out += [f'<{k} objtype="site" objname="{site}"/>' for k in frame] + [f'<{k} site="{site}"/>' for k in kinds]
    for b in range(m.nbody):
        body = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_BODY, b)
        if body and b > 0:  # a massless body's inertial frame is placed differently by MuJoCo 2.2.2 and 4.0
            out += [f'<{k} objtype="{t}" objname="{body}"/>' for k in frame
                    for t in (("xbody", "body") if m.body_mass[b] > 0 else ("xbody",))]
        if body and (b == 0 or m.body_jntnum[b] > 0):
            out += [f'<subtreecom body="{body}"/>', f'<subtreelinvel body="{body}"/>']
    for g in range(m.ngeom):
        geom = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g)
        if geom and m.geom_bodyid[g] > 0:
            out += [f'<{k} objtype="geom" objname="{geom}"/>' for k in frame]
    return xml.replace("</mujoco>", "<sensor>" + "".join(out) + extra + "</sensor>\n</mujoco>")


def relative(ours, theirs):
    """The largest |ours - theirs| relative to max(1, max |theirs|) (0 for empty arrays)."""
    ours, theirs = np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64)
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    if ours.size == 0:
        return 0.0
    return float(np.abs(ours - theirs).max() / max(1.0, np.abs(theirs).max()))


def random_quaternion(rng):
    q = rng.standard_normal(4)
    return q / np.linalg.norm(q)


class Twin:
    """Lockstep's model and a one-world float64 batch, and MuJoCo's model and data, of one text."""

    def __init__(self, tmp_path, xml: str, law: str = "compliant", mujoco_xml: str | None = None):
        path = tmp_path / "model.xml"
        path.write_text(xml)
        self.law = law
        self.model = lockstep.load({"mjcf": {"path": str(path), "contact_law": law}})
        self.layout = self.model.mjcf_layout
        self.batch = lockstep.Batch(self.model, 1, dtype="float64")
        path = tmp_path / "mujoco.xml"
        path.write_text(mujoco_spelling(xml if mujoco_xml is None else mujoco_xml))
        self.m = mujoco.MjModel.from_xml_path(str(path))
        self.d = mujoco.MjData(self.m)
        # Lockstep's text as MuJoCo compiles it: which geoms may touch the floor (random_state).
        self.own = self.m if mujoco_xml is None else mujoco.MjModel.from_xml_string(mujoco_spelling(xml))
        m = self.m
        m.opt.solver = mujoco.mjtSolver.mjSOL_NEWTON  # MuJoCo's solve to convergence, as Lockstep's
        m.opt.tolerance, m.opt.iterations = 1e-15, 1000
        m.opt.jacobian = mujoco.mjtJacobian.mjJAC_DENSE  # efc_J as a matrix (limit_force_error)
        if law == "compliant":  # Lockstep's contacts and stops are its own: MuJoCo's are off, ours idle
            m.opt.disableflags |= (mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_LIMIT
                                   | mujoco.mjtDisableBit.mjDSBL_FRICTIONLOSS)
        self.actuators = self.layout["actuators"]
        assert len(self.actuators) == m.nu
        self.target_columns = {n: i for i, n in enumerate(self.model.field_components("target"))}

    # --- states ---
    def random_state(self, rng, speed=2.0, beyond_range=0.0, contact=False, clearance=(-0.004, 0.001)):
        """qpos, qvel, ctrl: hinges and slides uniform in their ranges (widened by beyond_range of
        the range on each side) or qpos0 +- 1, unit quaternions, speeds in [-speed, speed], motors'
        controls beyond their ctrlrange (to be clamped), servos' inside it. With contact, the free
        body is moved along the floor's normal until its lowest geom is at a distance uniform in
        `clearance` from it (4 mm into it to 1 mm above it)."""
        m = self.m
        qpos, qvel = m.qpos0.copy(), rng.uniform(-speed, speed, m.nv)
        for j in range(m.njnt):
            a, kind = m.jnt_qposadr[j], m.jnt_type[j]
            if kind == mujoco.mjtJoint.mjJNT_FREE:
                qpos[a:a + 3] += rng.uniform(-0.3, 0.3, 3)
                qpos[a + 3:a + 7] = random_quaternion(rng)
            elif kind == mujoco.mjtJoint.mjJNT_BALL:
                qpos[a:a + 4] = random_quaternion(rng)
            elif m.jnt_limited[j]:
                lo, hi = m.jnt_range[j]
                w = beyond_range * (hi - lo)
                qpos[a] = rng.uniform(lo - w, hi + w)
            else:
                qpos[a] += rng.uniform(-1, 1)
        ctrl = rng.uniform(-2, 2, m.nu)
        for i, act in enumerate(self.actuators):
            if m.actuator_ctrllimited[i]:
                lo, hi = m.actuator_ctrlrange[i]
                w = 0.5 * (hi - lo) if act["kind"] == "motor" else 0.0
                ctrl[i] = rng.uniform(lo - w, hi + w)
        if contact:
            self._lower_onto_floor(qpos, rng.uniform(*clearance))
        return qpos, qvel, ctrl

    def _lower_onto_floor(self, qpos, clearance):
        """Moves the (first) free joint so that the geoms' lowest point is at `clearance` from the
        (first) plane on the world body, along its normal."""
        m, d = self.m, self.d
        free = [j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE][0]
        d.qpos[:] = qpos
        mujoco.mj_kinematics(m, d)
        plane = [g for g in range(m.ngeom) if m.geom_type[g] == mujoco.mjtGeom.mjGEOM_PLANE][0]
        n, p0 = d.geom_xmat[plane].reshape(3, 3)[:, 2], d.geom_xpos[plane]
        own = self.own
        touching = [g for g in range(m.ngeom) if own.body_weldid[own.geom_bodyid[g]] != 0 and (
            own.geom_contype[g] & own.geom_conaffinity[plane] or own.geom_contype[plane] & own.geom_conaffinity[g])]
        lowest = min(self.support(g, n) - p0 @ n for g in touching)
        qpos[m.jnt_qposadr[free]:m.jnt_qposadr[free] + 3] += (clearance - lowest) * n

    def support(self, g, n):
        """The smallest n . x over the points x of geom g (at d's kinematics)."""
        m, d = self.m, self.d
        c, R, s = d.geom_xpos[g], d.geom_xmat[g].reshape(3, 3), m.geom_size[g]
        t = m.geom_type[g]
        if t == mujoco.mjtGeom.mjGEOM_SPHERE:
            return c @ n - s[0]
        if t == mujoco.mjtGeom.mjGEOM_CAPSULE:
            return c @ n - s[1] * abs(R[:, 2] @ n) - s[0]
        if t == mujoco.mjtGeom.mjGEOM_CYLINDER:
            axial = R[:, 2] @ n
            return c @ n - s[1] * abs(axial) - s[0] * np.sqrt(max(0.0, 1 - axial ** 2))
        if t == mujoco.mjtGeom.mjGEOM_BOX:
            return c @ n - np.abs(R.T @ n) @ s[:3]
        if t == mujoco.mjtGeom.mjGEOM_ELLIPSOID:
            return c @ n - np.linalg.norm(s[:3] * (R.T @ n))
        raise ValueError(f"geom {g}: no support function for type {t}")

    def set_state(self, qpos, qvel, ctrl):
        """Both in the state: MuJoCo's mj_forward (and mj_rnePostConstraint, for cfrc_ext); Lockstep's
        q, u, actions (a motor's control, a servo's target ctrl / gear) and evaluate()."""
        m, d = self.m, self.d
        d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, qvel, ctrl
        mujoco.mj_forward(m, d)
        mujoco.mj_rnePostConstraint(m, d)
        q, u = self.model.from_mujoco(qpos[None].copy(), qvel[None].copy())
        self.batch.set_state(q, u)
        tau, target = np.zeros((1, self.model.nu)), np.zeros((1, len(self.target_columns)))
        speeds = self.model.speed_names
        for act, c in zip(self.actuators, ctrl):
            name = speeds[act["u"]]
            if act["kind"] == "motor":
                tau[0, act["u"]] = c
            else:
                part = "position" if act["kind"] == "position" else "velocity"
                target[0, self.target_columns[f"target.{name}.{part}"]] = c / act["gear"]
        self.batch.tau[...] = tau
        self.batch.target[...] = target
        self.batch.evaluate()
        assert self.batch.status[0] == 0, self.batch.describe_status(0)

    # --- comparisons ---
    def qacc_error(self):
        qpos = self.d.qpos[None].copy()
        _, theirs = self.model.from_mujoco(qpos, self.d.qacc[None].copy())
        return relative(self.batch.udot[0], theirs[0])

    def sensor_errors(self):
        """The sensors' errors in three groups: those of positions and velocities ("sensors"), of
        accelerations and forces ("acceleration sensors": accelerometer, force, torque) and touch."""
        m = self.m
        ours = np.array(self.batch.sensors[0])
        theirs = fix_quaternion_signs(m, ours, self.d.sensordata)
        group = np.zeros(m.nsensordata, dtype=int)
        for s in range(m.nsensor):
            kind = m.sensor_type[s]
            group[m.sensor_adr[s]:m.sensor_adr[s] + m.sensor_dim[s]] = (
                2 if kind == int(mujoco.mjtSensor.mjSENS_TOUCH) else 1 if kind in _ACCELERATION_SENSORS else 0)
        return {name: relative(ours[group == k], theirs[group == k])
                for k, name in enumerate(("sensors", "acceleration sensors", "touch"))}

    def body_errors(self):
        """Per quantity of mujocoBody: the error against mjData's (the world body's cinert and cvel,
        MuJoCo's zeros about no point, left out, and the centres of mass of massless bodies and
        subtrees, which MuJoCo 2.2.2's and 4.0's compilers place differently; cfrc_ext summed over
        each Lockstep body's MuJoCo bodies, since a welded body's contacts are its carrier's)."""
        m, d = self.m, self.d
        ours = np.array(self.batch.mujocoBody[0]).reshape(m.nbody, 40)
        out = {}
        for name, (a, b) in _BODY_PARTS.items():
            theirs = getattr(d, name)
            mine = ours[:, a:b]
            if name in ("cinert", "cvel"):
                mine, theirs = mine[1:], theirs[1:]
            if name in ("xipos", "subtree_com"):
                massive = (m.body_mass if name == "xipos" else m.body_subtreemass) > 0
                mine, theirs = mine[massive], theirs[massive]
            if name == "cfrc_ext":
                carriers = [b["body"] for b in self.layout["bodies"]]
                groups = sorted(set(carriers))
                pick = np.array([[c == g for c in carriers] for g in groups], dtype=np.float64)
                mine, theirs = pick @ mine, pick @ theirs
            out[name] = relative(mine, theirs)
        return out

    def contact_error(self):
        """Lockstep's contact points in contact against MuJoCo's contacts that have constraint rows,
        matched by position: dist, position, normal, force in the contact frame (normal,
        tangents) and in Ground, and torque (torsional and rolling friction's) in the contact frame and
        in Ground, relative to max(1, the largest force). Also fails on a count mismatch."""
        m, d = self.m, self.d
        rows = np.array(self.batch.softContact[0]).reshape(-1, _SOFT_WIDTH)
        rows = rows[rows[:, 0] > 0.5]
        theirs = [c for c in range(d.ncon) if d.contact[c].efc_address >= 0]
        if len(rows) != len(theirs):
            return np.inf
        if not theirs:
            return 0.0
        force = np.zeros(6)
        expected = []
        for c in theirs:
            mujoco.mj_contactForce(m, d, c, force)
            con = d.contact[c]
            frame = con.frame.reshape(3, 3)  # rows: the normal, the two tangents
            expected.append(np.concatenate([[1.0, con.dist], con.pos, con.frame[:3], force[:3], frame.T @ force[:3],
                                            force[3:], frame.T @ force[3:]]))
        expected = np.array(expected)
        order = [int(np.argmin(np.linalg.norm(expected[:, 2:5] - r[2:5], axis=1) + 10 * np.abs(expected[:, 1] - r[1])))
                 for r in rows]
        if len(set(order)) != len(order):
            return np.inf
        expected = expected[order]
        scale = max(1.0, np.abs(expected[:, 8:]).max())
        return max(relative(rows[:, :8], expected[:, :8]), float(np.abs(rows[:, 8:] - expected[:, 8:]).max() / scale))

    def state_error(self):
        """MuJoCo's qpos and qvel as Lockstep gives them back (mujocoQpos, mujocoQvel: the joint map's
        way back from q and u), a quaternion's sign aside."""
        m, qpos = self.m, np.array(self.batch.mujocoQpos[0])
        for j in range(m.njnt):
            if m.jnt_type[j] in (mujoco.mjtJoint.mjJNT_FREE, mujoco.mjtJoint.mjJNT_BALL):
                a = m.jnt_qposadr[j] + (3 if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_FREE else 0)
                qpos[a:a + 4] *= np.sign(qpos[a:a + 4] @ self.d.qpos[a:a + 4])
        return max(relative(qpos, self.d.qpos), relative(self.batch.mujocoQvel[0], self.d.qvel))

    def limit_force_error(self):
        """Each soft limit's generalized force (softLimitForce) against MuJoCo's limit rows' forces
        on the joint's dof (efc_J times efc_force)."""
        m, d = self.m, self.d
        names = self.model.field_components("softLimitForce")
        ours = np.array(self.batch.softLimitForce[0])
        theirs = np.zeros(len(names))
        J = d.efc_J.reshape(d.nefc, m.nv)  # dense (Twin)
        for r in range(d.nefc):
            if d.efc_type[r] == mujoco.mjtConstraint.mjCNSTR_LIMIT_JOINT:
                j = d.efc_id[r]
                name = f"limit.{mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)}.force"
                if name not in names:  # a limit Lockstep does not have
                    return np.inf
                theirs[names.index(name)] += J[r, m.jnt_dofadr[j]] * d.efc_force[r]
        return relative(ours, theirs)

    def errors(self):
        """Every comparison at the current state: name -> relative error."""
        out = {"qacc": self.qacc_error(), "qpos and qvel": self.state_error(), **self.sensor_errors()}
        out.update(self.body_errors())
        if self.law == "mujoco":
            out["contacts"] = self.contact_error()
            out["limit forces"] = self.limit_force_error()
        return out


def worst_errors(twin, rng, states, **state_options):
    """The largest error of each comparison over `states` random states, and how many states had
    MuJoCo constraint rows (contacts or limits)."""
    worst, constrained = {}, 0
    for _ in range(states):
        twin.set_state(*twin.random_state(rng, **state_options))
        constrained += twin.d.nefc > 0
        for k, v in twin.errors().items():
            worst[k] = max(worst.get(k, 0.0), v)
    return worst, constrained


def check_equal(feature, twin, tolerance, states, seed=11, skip=(), **state_options):
    """Asserts every comparison but those in `skip` within tolerance over `states` random states;
    returns the worst errors and how many states had MuJoCo constraint rows."""
    worst, constrained = worst_errors(twin, np.random.default_rng(seed), states, **state_options)
    print(feature, {k: f"{v:.1e}" for k, v in worst.items()}, f"constrained in {constrained}/{states}")
    failing = {k: v for k, v in worst.items() if not v <= tolerance and k not in skip}
    assert not failing, f"{feature}: {failing}"
    return worst, constrained


def check_noticed(feature, change, twin, tolerance, states, seed=11, skip=(), **state_options):
    """Asserts that some comparison but those in `skip` fails by more than 100 tolerances (twin's
    MuJoCo side changed)."""
    worst, _ = worst_errors(twin, np.random.default_rng(seed), states, **state_options)
    worst = {k: v for k, v in worst.items() if k not in skip}
    assert max(worst.values()) > 100 * tolerance, f"{feature}: {change} changes nothing compared: {worst}"


def change(spec):
    """A change of one attribute as (old, new): spec itself when a pair; for a string, the string with
    "disable" turned to "enable", else with its last number raised by a quarter (0 to 0.05)."""
    if not isinstance(spec, str):
        return tuple(spec)
    if '"disable"' in spec:
        return spec, spec.replace('"disable"', '"enable"')
    last = list(re.finditer(r"-?\d*\.?\d+", spec))[-1]
    value = float(last.group())
    return spec, spec[:last.start()] + f"{value * 1.25 if value else 0.05:g}" + spec[last.end():]


def change_id(value):
    """A test id of a feature or of a change (old->new)."""
    return value if isinstance(value, str) else "->".join(value)


def changes_of(features):
    """(feature, (old, new)) for each change each feature names: {feature: (xml, specs)}."""
    return [(f, change(c)) for f, (_, specs) in features.items() for c in specs]


def mutate(xml: str, old: str, new: str) -> str:
    """xml with the one occurrence of `old` replaced by `new` (a missing or repeated `old` is an
    error in the test, not a pass)."""
    count = len(re.findall(re.escape(old), xml))
    assert count == 1, f"{old!r} occurs {count} times"
    return xml.replace(old, new)
