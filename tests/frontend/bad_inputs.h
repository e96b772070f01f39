// The bad input files of tests/data/bad and the message each one must produce, after "<file>: ".
// Used by the reader's tests (test_scene.cpp) and the command line's (test_cli.cpp).
#pragma once

#include <vector>

namespace lockstep::test {

struct BadScene {
  const char* file;     // under tests/data/bad/
  const char* message;  // what the error says after "<file>: "
};

inline const std::vector<BadScene> kBadScenes = {
    {"malformed.json", "invalid JSON: parse error at line 4, column 22: syntax error while parsing object key"},
    {"nan.json", "invalid JSON: parse error at line 2, column 18"},
    {"infinity.json", "invalid JSON: number overflow parsing '1e999' at line 4, column 51 (numbers must be finite doubles)"},
    {"not_an_object.json", "top level: must be an object (got an array)"},
    {"duplicate_key.json", "invalid JSON: bodies[1]: duplicate key 'mass'"},
    {"unknown_mobilizer.json", "bodies[1].mobilizer: unknown mobilizer type 'hinge' (expected one of: weld, pin,"},
    {"missing_parent.json", "bodies[1].parent: no body or link named 'link0' (did you mean 'link1'?)"},
    {"cycle.json", "body 'link1': parent: the mobilizer tree has a cycle through it"},
    {"negative_mass.json", "bodies[1]: mass: must be >= 0 (got -1)"},
    {"non_pd_inertia.json", "bodies[0]: inertia: not positive semidefinite (principal moments -0.005, 0.02, 0.02)"},
    {"triangle_inertia.json", "bodies[0]: inertia: violates the triangle inequality (principal moments 0.01 + 0.01 < 0.05)"},
    {"wrong_length.json", "bodies[1].com: must have 3 values (got 2)"},
    {"unknown_key.json", "bodies[0]: unknown key 'masss' (did you mean 'mass'?); allowed keys: name, parent,"},
    {"unknown_top_key.json", "top level: unknown key 'gravty' (did you mean 'gravity'?)"},
    {"string_for_number.json", "bodies[0].mass: must be a number (got a string)"},
    {"duplicate_body.json", "bodies[1].name: 'link1' is already used by another body or URDF link"},
    {"both_rotations.json", "bodies[1].X_PF: give the rotation as either 'xyz_angles' or 'quaternion', not both"},
    {"non_unit_quaternion.json", "bodies[1].X_BM.quaternion: must be a unit quaternion [w, x, y, z] (its length is 1.00498"},
    {"negative_damping.json", "bodies[1].damping: must be >= 0 (got -0.1)"},
    {"damping_length.json", "bodies[1].damping: must have 1 value (got 2)"},
    {"bad_spring.json", "spring_dampers[0].free_length: must be > 0 (got 0)"},
    {"same_body_spring.json", "spring_dampers[0].bodyB: must be on a different body than bodyA (both are on 'link2')"},
    {"bad_bushing.json", "linear_bushings[0].stiffness[3]: must be >= 0 (got -5)"},
    {"bad_contact.json", "sphere_contacts[0].radius_on_F: must be > 0 (got 0)"},
    {"ground_negative_stiffness.json", "ground.stiffness: must be >= 0 (got -1)"},
    {"ground_zero_radius.json", "ground.contact_spheres[1].radius: must be > 0 (got 0)"},
    {"ground_zero_normal.json", "ground.normal: must have a nonzero length"},
    {"ground_on_ground.json", "ground.contact_spheres[0].body: must be a body or link, not ground"},
    {"ground_string_friction.json", "ground.contact_spheres[0].dynamic_friction: must be a number (got a string)"},
    {"bad_initial_state.json", "initial_state.q: must have 2 values (got 3)"},
    {"unknown_joint.json", "initial_state.joints.joint3: no joint named 'joint3' (did you mean 'joint1'?)"},
    {"bad_integrator.json", "simulation.integrator: must be \"rk4\", \"euler\" or \"implicit\" (got 'rk45')"},
    {"bad_root_joint.json", "urdf.root_joint: must be \"fixed\" or \"free\" (got 'floating')"},
    {"missing_urdf.json", "urdf.path: " LOCKSTEP_SOURCE_DIR "/tests/data/bad/no_such_robot.urdf: cannot open the file"},
    {"bad_urdf_include.json", "urdf.path: " LOCKSTEP_SOURCE_DIR "/tests/data/bad/triangle_inertia.urdf: link 'arm': inertia: violates the triangle inequality"},
    {"per_world_unknown_body.json", "per_world[0].mass_properties.link3: no body named 'link3' (did you mean 'link1'?)"},
    {"per_world_negative_mass.json", "per_world[0].mass_properties.link2: mass: must be >= 0 (got -2)"},
    {"negative_kp.json", "actuators[0].kp: must be >= 0 (got -3)"},
    {"actuator_mode.json", "actuators[0].mode: unknown actuator mode 'effort' (expected one of: torque, position, velocity)"},
    {"stop_bounds.json", "limits.stops[0].lower: must be <= upper"},
    {"duplicate_stop.json", "limits.stops[1].coordinate: coordinate 'joint1' already has a stop (limits.stops[0]); give one stop per coordinate"},
    {"kp_on_velocity_actuator.json", "actuators[0].kp: a velocity actuator has no kp (it acts in position mode only)"},
    {"kd_on_torque_actuator.json", "actuators[0].kd: a torque actuator has no kd (it acts in position and velocity modes)"},
    {"empty_coordinates.json", "actuators[0].coordinates: must name at least one coordinate"},
    {"empty_record.json", "simulation.record: must name at least one quantity (leave \"record\" out for the default set)"},
    {"per_world_new_stop_without_stiffness.json", "per_world[0].limits.joint2: missing key 'stiffness' (coordinate 'joint2' has no stop in the scene to take it from, and \"limits\" gives no default \"stiffness\")"},
    {"per_world_position_without_kp.json", "per_world[0].actuators.joint1: missing key 'kp' (coordinate 'joint1' has no position actuator in the scene to take it from)"},
    {"per_world_kp_on_velocity_actuator.json", "per_world[0].actuators.joint1.kp: a velocity actuator has no kp (it acts in position mode only)"},
    {"ground_static_below_dynamic_friction.json", "ground.contact_spheres[0]: static_friction (0.3) must be >= dynamic_friction (0.5), here or in \"ground\""},
    {"stop_on_ball.json", "joint stop 'joint2.qx': coordinate: 'joint2.qx' belongs to a ball mobilizer, whose qdot is not u"},
    // URDF files, read directly as scenes.
    {"malformed.urdf", "invalid URDF: Error reading end tag."},
    {"unknown_joint_type.urdf", "invalid URDF: Joint [shoulder] has no known type [hinge]"},
    {"missing_parent_link.urdf", "invalid URDF: Failed to build tree: parent link [torso] of joint [shoulder] not found."},
    {"two_roots.urdf", "invalid URDF: Failed to find root link: Two root links found: [base] and [leg]"},
    {"negative_mass.urdf", "link 'arm': mass: must be >= 0 (got -2)"},
    {"non_pd_inertia.urdf", "link 'arm': inertia: not positive semidefinite (principal moments -0.1, 0.1, 0.1); fix the file, or load it with --repair-inertia"},
    {"triangle_inertia.urdf", "link 'arm': inertia: violates the triangle inequality (principal moments 0.01 + 0.01 < 0.05); fix the file, or load it with --repair-inertia"},
    {"nan_origin.urdf", "invalid URDF: Unable to parse component [nan] to a double (while parsing a vector value); Malformed parent origin element for joint [shoulder]"},
    {"zero_axis.urdf", "joint 'shoulder': axis: must not be zero"},
    {"joint_cycle.urdf", "link 'b': not connected to the root link 'base' (the joints through it form a cycle)"},
};

}  // namespace lockstep::test
