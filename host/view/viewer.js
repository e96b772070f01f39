// Lockstep's recording player (docs/viewer.md): draws the bodies' shapes at their recorded poses
// with three.js (r111, Debian's libjs-three, inlined before this script by `lockstep view`).
// The recording is the JSON of the element "lockstep-data"; arrays of numbers come base64-encoded
// (little-endian float32 or int32). The page's address may end in #t=SECONDS (start there,
// paused) or #frame=N.
(function () {
  "use strict";
  const status = document.getElementById("status");
  function fail(message) {
    status.textContent = "error: " + message;
    status.className = "error";
    console.error("lockstep viewer: " + message);
  }
  function floats(b64) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    return new Float32Array(bytes.buffer);
  }
  function ints(b64) {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    return new Int32Array(bytes.buffer);
  }

  // Viridis, at five stops.
  const viridis = [[0.267, 0.005, 0.329], [0.229, 0.322, 0.546], [0.128, 0.567, 0.551], [0.369, 0.789, 0.383],
                   [0.993, 0.906, 0.144]];
  function colormap(x) {
    x = Math.min(1, Math.max(0, x)) * (viridis.length - 1);
    const i = Math.min(viridis.length - 2, Math.floor(x)), f = x - i;
    const a = viridis[i], b = viridis[i + 1];
    return new THREE.Color(a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1]), a[2] + f * (b[2] - a[2]));
  }

  function run() {
    const data = JSON.parse(document.getElementById("lockstep-data").textContent);
    const nb = data.bodies.length, nw = data.worlds.length, nf = data.time.length;
    const poses = floats(data.poses);
    if (poses.length !== nf * nw * nb * 7) throw new Error("the recorded poses do not match the frames, worlds and bodies");
    const nc = data.contacts || 0;
    const contactData = nc ? floats(data.contact_forces) : null;

    const renderer = new THREE.WebGLRenderer({antialias: true});
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    renderer.setSize(window.innerWidth, window.innerHeight);
    renderer.setClearColor(0xf4f5f7);
    document.body.appendChild(renderer.domElement);
    const scene = new THREE.Scene();
    scene.add(new THREE.HemisphereLight(0xffffff, 0x667788, 0.75));
    const sun = new THREE.DirectionalLight(0xffffff, 0.65);
    sun.position.set(3, -4, 8);
    scene.add(sun);

    // Where each world sits: side by side on a grid, or all at the origin (ghosts).
    const cols = data.ghosts ? 1 : Math.ceil(Math.sqrt(nw));
    const offsets = [];
    for (let w = 0; w < nw; ++w) {
      const r = Math.floor(w / cols), c = w % cols;
      offsets.push(data.ghosts ? new THREE.Vector3() : new THREE.Vector3(c * data.spacing, -r * data.spacing, 0));
    }

    // The colour of each world: by the chosen value, else the shapes' own.
    let lo = 0, hi = 1;
    if (data.color_values) {
      lo = Math.min.apply(null, data.color_values.filter(isFinite));
      hi = Math.max.apply(null, data.color_values.filter(isFinite));
      if (!(hi > lo)) hi = lo + 1;
      document.getElementById("legend").style.display = "block";
      document.getElementById("legend-name").textContent = data.color_by;
      document.getElementById("legend-lo").textContent = lo.toPrecision(4);
      document.getElementById("legend-hi").textContent = hi.toPrecision(4);
    }

    // One geometry per shape, shared by the worlds.
    function geometryOf(s) {
      const z = s.size;
      switch (s.kind) {
        case "box": return new THREE.BoxBufferGeometry(2 * z[0], 2 * z[1], 2 * z[2]);
        case "sphere": return new THREE.SphereBufferGeometry(z[0], 24, 16);
        case "ellipsoid": {
          const g = new THREE.SphereBufferGeometry(1, 24, 16);
          g.scale(z[0], z[1], z[2]);
          return g;
        }
        case "cylinder": {
          const g = new THREE.CylinderBufferGeometry(z[0], z[0], 2 * z[1], 24);
          g.rotateX(Math.PI / 2);  // three.js cylinders lie along y; Lockstep's along z
          return g;
        }
        case "capsule": {
          const g = new THREE.CylinderBufferGeometry(z[0], z[0], 2 * z[1], 24, 1, true);
          g.rotateX(Math.PI / 2);
          const top = new THREE.SphereBufferGeometry(z[0], 24, 12, 0, 2 * Math.PI, 0, Math.PI / 2);
          top.rotateX(Math.PI / 2);
          top.translate(0, 0, z[1]);
          const bottom = new THREE.SphereBufferGeometry(z[0], 24, 12, 0, 2 * Math.PI, Math.PI / 2, Math.PI / 2);
          bottom.rotateX(Math.PI / 2);
          bottom.translate(0, 0, -z[1]);
          const merged = new THREE.Geometry();
          for (const part of [g, top, bottom]) merged.merge(new THREE.Geometry().fromBufferGeometry(part));
          return new THREE.BufferGeometry().fromGeometry(merged);
        }
        case "mesh": {
          const g = new THREE.BufferGeometry();
          g.setAttribute("position", new THREE.BufferAttribute(floats(s.vertices), 3));
          g.setIndex(new THREE.BufferAttribute(new Uint32Array(ints(s.triangles).buffer), 1));
          g.computeVertexNormals();
          return g;
        }
      }
      return null;
    }

    // The extent of everything drawn, for the ground, the camera and the arrows.
    const box = new THREE.Box3();
    for (let w = 0; w < nw; ++w)
      for (let b = 0; b < nb; ++b) {
        const i = ((0 * nw + w) * nb + b) * 7;
        box.expandByPoint(new THREE.Vector3(poses[i], poses[i + 1], poses[i + 2]).add(offsets[w]));
      }
    const size = Math.max(data.extent, box.getSize(new THREE.Vector3()).length(), 0.5);

    const bodyObjects = [];  // [world][body]
    const shapes = data.shapes.map((s) => ({s: s, geometry: s.kind === "plane" ? null : geometryOf(s)}));
    for (let w = 0; w < nw; ++w) {
      const world = new THREE.Group();
      world.position.copy(offsets[w]);
      scene.add(world);
      const bodies = [];
      for (let b = 0; b < nb; ++b) {
        const o = new THREE.Group();
        world.add(o);
        bodies.push(o);
      }
      bodyObjects.push(bodies);
      for (const {s, geometry} of shapes) {
        if (!geometry) continue;
        const color = data.color_values && s.role !== "contact" ? colormap((data.color_values[w] - lo) / (hi - lo))
                                                                  : new THREE.Color(s.rgba[0], s.rgba[1], s.rgba[2]);
        const opacity = data.ghosts && nw > 1 ? Math.min(s.rgba[3], 0.35) : s.rgba[3];
        const material = new THREE.MeshPhongMaterial({color: color, transparent: opacity < 1, opacity: opacity,
                                                      depthWrite: opacity >= 1, shininess: 30});
        const mesh = new THREE.Mesh(geometry, material);
        mesh.position.set(s.pose[0], s.pose[1], s.pose[2]);
        mesh.quaternion.set(s.pose[4], s.pose[5], s.pose[6], s.pose[3]);
        (s.body >= 0 ? bodies[s.body] : world).add(mesh);
      }
    }
    // The ground: each half-space as a large plane with a grid, under every world; a grid at z = 0
    // for reference when the scene has no ground.
    const groundSize = 4 * size + (data.ghosts ? 0 : cols * data.spacing * 2);
    const center = box.getCenter(new THREE.Vector3());
    const planes = shapes.filter(({s}) => s.kind === "plane");
    const groundPoses = planes.length ? planes.map(({s}) => s) : [{pose: [0, 0, 0, 1, 0, 0, 0], rgba: [0.82, 0.84, 0.86, 0], size: [0, 0, 0]}];
    for (const s of groundPoses) {
      const g = new THREE.Group();
      g.position.set(s.pose[0], s.pose[1], s.pose[2]);
      g.quaternion.set(s.pose[4], s.pose[5], s.pose[6], s.pose[3]);
      const wx = s.size[0] > 0 ? 2 * s.size[0] : groundSize, wy = s.size[1] > 0 ? 2 * s.size[1] : groundSize;
      if (s.rgba[3] > 0) {
        const plane = new THREE.Mesh(new THREE.PlaneBufferGeometry(wx, wy),
                                     new THREE.MeshPhongMaterial({color: new THREE.Color(s.rgba[0], s.rgba[1], s.rgba[2]),
                                                                  side: THREE.DoubleSide}));
        plane.position.set(center.x - s.pose[0], center.y - s.pose[1], -1e-3);
        g.add(plane);
      }
      const step = Math.pow(10, Math.floor(Math.log10(size / 2)));
      const divisions = Math.min(400, Math.ceil(Math.max(wx, wy) / step));
      const grid = new THREE.GridHelper(divisions * step, divisions, 0x9aa3ad, 0xc3c9d0);
      grid.rotation.x = Math.PI / 2;  // GridHelper lies in x-z; the ground is x-y
      grid.position.set(Math.round((center.x - s.pose[0]) / step) * step, Math.round((center.y - s.pose[1]) / step) * step, 0);
      g.add(grid);
      scene.add(g);
    }
    // Contact forces: an arrow per contact and world, from the contact point along the force.
    const arrows = [];
    let forceScale = 0;
    if (nc) {
      let largest = 0;
      for (let i = 0; i < contactData.length; i += 6)
        largest = Math.max(largest, Math.hypot(contactData[i + 3], contactData[i + 4], contactData[i + 5]));
      forceScale = largest > 0 ? 0.3 * data.extent / largest : 0;
      for (let w = 0; w < nw; ++w) {
        const row = [];
        for (let c = 0; c < nc; ++c) {
          const a = new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 1, 0xd62728);
          a.position.copy(offsets[w]);
          scene.add(a);
          row.push(a);
        }
        arrows.push(row);
      }
    }

    const camera = new THREE.PerspectiveCamera(40, window.innerWidth / window.innerHeight, size / 1000, size * 200);
    camera.up.set(0, 0, 1);
    camera.position.copy(center).add(new THREE.Vector3(1.1, -1.5, 0.8).multiplyScalar(size * 0.75));
    const controls = new THREE.OrbitControls(camera, renderer.domElement);
    controls.target.copy(center);
    controls.update();

    let frame = 0;
    function show(f) {
      frame = f;
      for (let w = 0; w < nw; ++w)
        for (let b = 0; b < nb; ++b) {
          const i = ((f * nw + w) * nb + b) * 7;
          const o = bodyObjects[w][b];
          o.position.set(poses[i], poses[i + 1], poses[i + 2]);
          o.quaternion.set(poses[i + 4], poses[i + 5], poses[i + 6], poses[i + 3]);
        }
      for (let w = 0; w < arrows.length; ++w)
        for (let c = 0; c < nc; ++c) {
          const i = ((f * nw + w) * nc + c) * 6;
          const force = new THREE.Vector3(contactData[i + 3], contactData[i + 4], contactData[i + 5]);
          const a = arrows[w][c], length = force.length() * forceScale;
          a.visible = length > 1e-6 * size;
          if (!a.visible) continue;
          a.position.set(contactData[i], contactData[i + 1], contactData[i + 2]).add(offsets[w]);
          a.setDirection(force.normalize());
          a.setLength(length, Math.min(0.2 * length, 0.05 * size), Math.min(0.1 * length, 0.025 * size));
        }
      slider.value = f;
      clock.textContent = "t = " + data.time[f].toFixed(3) + " s";
    }

    // Controls: play/pause, the time slider, the speed.
    const slider = document.getElementById("slider"), clock = document.getElementById("clock");
    const play = document.getElementById("play"), speed = document.getElementById("speed");
    slider.max = Math.max(0, nf - 1);
    let playing = nf > 1, t = data.time[0], last = null;
    const hash = window.location.hash.slice(1).split("=");
    if (hash[0] === "t" || hash[0] === "frame") {
      playing = false;
      if (hash[0] === "t") t = parseFloat(hash[1]);
      else t = data.time[Math.min(nf - 1, Math.max(0, parseInt(hash[1], 10) || 0))];
    }
    function frameAt(time) {
      let a = 0, b = nf - 1;
      while (a < b) {
        const m = (a + b + 1) >> 1;
        if (data.time[m] <= time) a = m; else b = m - 1;
      }
      return a;
    }
    play.textContent = playing ? "pause" : "play";
    play.onclick = () => {
      playing = !playing;
      if (playing && frame === nf - 1) t = data.time[0];
      play.textContent = playing ? "pause" : "play";
      last = null;
    };
    slider.oninput = () => {
      t = data.time[parseInt(slider.value, 10)];
      show(frameAt(t));
    };
    document.getElementById("title").textContent = data.title;
    document.getElementById("worlds").textContent =
        nw === 1 ? "world " + data.worlds[0] : nw + " worlds" + (data.ghosts ? ", overlaid" : ", side by side");
    window.addEventListener("resize", () => {
      camera.aspect = window.innerWidth / window.innerHeight;
      camera.updateProjectionMatrix();
      renderer.setSize(window.innerWidth, window.innerHeight);
    });

    show(frameAt(t));
    function animate(now) {
      if (playing && last !== null) {
        t += (now - last) / 1000 * parseFloat(speed.value);
        if (t > data.time[nf - 1]) t = data.time[0];
      }
      last = now;
      if (playing) show(frameAt(t));
      renderer.render(scene, camera);
      requestAnimationFrame(animate);
    }
    renderer.render(scene, camera);
    status.textContent = "ready: " + nb + " bodies, " + nw + " worlds, " + nf + " frames";
    requestAnimationFrame(animate);
  }

  try {
    run();
  } catch (e) {
    fail(e && e.message ? e.message : String(e));
  }
})();
