// `lockstep view`: one self-contained HTML file that plays a recording in the browser, with three.js
// (Debian's libjs-three) inlined, so that nothing is fetched when it is opened. docs/viewer.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/view/visuals.h"

namespace lockstep {

// What the page plays: poses of the shown worlds over time, optionally contact forces and a value
// per world to colour it by.
struct ViewerFrames {
  std::vector<double> time;            // [frames], increasing
  std::vector<std::int64_t> worlds;    // the recording's index of each shown world
  std::vector<float> poses;            // [frame][world][body][7]: x y z qw qx qy qz (bodyPose)
  int contacts = 0;                    // contact arrows per world (0: none)
  std::vector<float> contactForces;    // [frame][world][contact][6]: point (x y z), force (x y z), in G
  std::string colorBy;                 // the value's name; empty: the shapes' own colours
  std::vector<double> colorValues;     // [world]
};

struct ViewerOptions {
  std::string title;
  bool ghosts = false;  // overlay the worlds translucently instead of side by side
};

// Where three.js is read from: LOCKSTEP_THREE_DIR, else the folder CMake found at build time
// (Debian's /usr/share/javascript/three). Throws std::runtime_error naming the file when
// three.min.js or examples/js/controls/OrbitControls.js is missing.
std::string threeJsSource();

// The whole page. Throws std::runtime_error when the frames do not fit the visuals (pose counts).
std::string viewerHtml(const SceneVisuals& visuals, const ViewerFrames& frames, const ViewerOptions& options);
// Writes it as PATH.partial, then renames it to PATH; on failure (naming the file and the
// system's reason) neither is left.
void writeViewerHtml(const std::string& path, const SceneVisuals& visuals, const ViewerFrames& frames,
                     const ViewerOptions& options);

}  // namespace lockstep
