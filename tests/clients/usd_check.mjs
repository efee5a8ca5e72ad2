// TinyUSDZ (a USD parser of its own, not ours: tinyusdz on npm, WebAssembly) reads mesh-export's
// USDA layers (run by run_client.sh):
//
// - every layer loads as a stage without an error, its metadata as written (upAxis,
//   metersPerUnit, the time codes and their rate);
// - its render scene (the meshes a viewer draws, at the start time) has the cache's topology,
//   positions (1e-6 m: float32 in the file), unit normals and texture coordinates, also
//   face-varying ones with a seam, which it splits the vertices at;
// - the layer it parsed, printed back, holds every frame's time samples: the cloth's positions
//   and its static and per-frame attributes as primvars, the positions of a matched mesh in the
//   file's frame and units (Z up, centimetres), and a level-set mesh whose topology changes per
//   frame: the growing sphere of export_caches.hpp, closed, at its radius, of its volume.
//
// Usage: node usd_check.mjs TINYUSDZ_DIR WORK_DIR FRAMES
// Any failed check throws, and node exits 1.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const [moduleDir, work, framesArg] = process.argv.slice(2);
const frames = Number(framesArg);
const NX = 5, NZ = 4;  // tests/support/export_caches.hpp
const TOL = 1e-6;      // float32 positions of about 1 m, printed with 9 digits

// The package is built for browsers (Emscripten's ENVIRONMENT=web): it refuses to start where it
// sees Node.js. Its module text runs here as a function that sees a `window` and no `process`,
// and gets the .wasm as bytes instead of fetching it.
async function loadTinyUsdz(dir) {
  const source = fs.readFileSync(path.join(dir, 'tinyusdz.js'), 'utf8')
    .replace(/import\.meta\.url/g, JSON.stringify(`file://${dir}/`))
    .replace(/export default Module;\s*$/, 'return Module;');
  assert.ok(source.includes('return Module;'), `${dir}/tinyusdz.js: not the expected module`);
  const factory = new Function('process', 'window', source)(undefined, {});
  return factory({ wasmBinary: fs.readFileSync(path.join(dir, 'tinyusdz.wasm')) });
}
const native = await loadTinyUsdz(path.resolve(moduleDir));

function clothPosition(i, f) {
  const x = 0.1 * (i % NX), z = 0.1 * Math.floor(i / NX), t = (f - 1) / 24;
  return [x, 0.05 * Math.sin(3 * x + 2 * t) + 0.01 * f, z];
}
function clothUv(i) { return [(i % NX) / (NX - 1), Math.floor(i / NX) / (NZ - 1)]; }
function clothVelocity(i, f) { return [0.1 * i, 0.5 * f, -0.2]; }
function clothTriangles() {
  const tris = [];
  for (let j = 0; j + 1 < NZ; ++j)
    for (let i = 0; i + 1 < NX; ++i) {
      const a = j * NX + i, b = a + 1, c = a + NX, d = a + NX + 1;
      tris.push([a, c, b], [b, c, d]);
    }
  return tris;
}
const maxDiff = (a, b) => Math.max(...a.map((x, k) => Math.abs(x - b[k])));
const tuple = (flat, n, i) => Array.from(flat.slice(n * i, n * i + n));

// The stage as a renderer takes it (TinyUSDZ's render scene), and the layer as TinyUSDZ parsed
// it, printed back as USDA.
function open(file) {
  const full = path.join(work, file);
  const bytes = new Uint8Array(fs.readFileSync(full));
  const stage = new native.TinyUSDZLoaderNative();
  assert.ok(stage.loadFromBinary(bytes, full), `${file}: no stage: ${stage.error()}`);
  assert.equal(stage.numMeshes(), 1, `${file}: ${stage.numMeshes()} meshes`);
  const layer = new native.TinyUSDZLoaderNative();
  assert.ok(layer.loadAsLayerFromBinary(bytes, full), `${file}: no layer: ${layer.error()}`);
  return { mesh: stage.getMesh(0), layer: parseLayer(layer.layerToString(), file) };
}

// Reads what layerToString prints: the layer's metadata (`key = value` lines before the first
// prim) and every array-valued attribute as {static: [...]} or {samples: Map(time -> [...])},
// each array a list of numbers or of tuples.
function parseLayer(text, file) {
  const meta = {}, attrs = {};
  const values = (s) => {
    const tuples = [...s.matchAll(/\(([^)]*)\)/g)].map((m) => m[1].split(',').map(Number));
    return tuples.length ? tuples : s.split(',').filter((x) => x.trim()).map(Number);
  };
  const lines = text.split('\n');
  let inPrims = false;
  for (let n = 0; n < lines.length; ++n) {
    const line = lines[n].trim();
    if (line.startsWith('def ')) inPrims = true;
    let m;
    if (!inPrims && (m = line.match(/^(\w+) = "?([^"]*)"?$/))) meta[m[1]] = m[2];
    if ((m = line.match(/^(?:uniform )?\w+\[\] ([\w:]+) = \[(.*)\]/))) {
      attrs[m[1]] = { static: values(m[2]) };
    } else if ((m = line.match(/^\w+\[\] ([\w:]+)\.timeSamples = \{$/))) {
      const samples = new Map();
      for (++n; lines[n].trim() !== '}'; ++n) {
        const s = lines[n].trim().match(/^([-\d.e+]+): \[(.*)\],?$/);
        assert.ok(s, `${file}: ${m[1]}.timeSamples: cannot read '${lines[n].slice(0, 80)}'`);
        samples.set(Number(s[1]), values(s[2]));
      }
      attrs[m[1]] = { samples };
    }
  }
  return { meta, attrs, file };
}

function expectMeta(layer, expected) {
  for (const [k, v] of Object.entries(expected))
    assert.equal(layer.meta[k], String(v), `${layer.file}: ${k} is ${layer.meta[k]}, not ${v}`);
}
function samples(layer, name, frameList) {
  const a = layer.attrs[name];
  assert.ok(a && a.samples, `${layer.file}: no time-sampled ${name}`);
  assert.deepEqual([...a.samples.keys()], frameList, `${layer.file}: ${name}: sample times`);
  return a.samples;
}
function staticArray(layer, name) {
  const a = layer.attrs[name];
  assert.ok(a && a.static, `${layer.file}: no static ${name}`);
  return a.static;
}
const allFrames = Array.from({ length: frames }, (_, k) => k + 1);

// --- The cloth: fixed topology, vertex normals and UVs, a static and a per-frame attribute.
{
  const { mesh, layer } = open('cloth.usda');
  expectMeta(layer, { upAxis: 'Y', metersPerUnit: 1, startTimeCode: 1, endTimeCode: frames,
                      timeCodesPerSecond: 24, defaultPrim: 'root' });
  const tris = clothTriangles();
  assert.deepEqual(Array.from(mesh.faceVertexCounts), tris.map(() => 3), 'cloth: face sizes');
  assert.deepEqual(Array.from(mesh.faceVertexIndices), tris.flat(), 'cloth: triangles');
  assert.equal(mesh.points.length, 3 * NX * NZ, 'cloth: render points');
  let worst = 0, uvWorst = 0, normalWorst = 0;
  for (let i = 0; i < NX * NZ; ++i) {
    worst = Math.max(worst, maxDiff(tuple(mesh.points, 3, i), clothPosition(i, 1)));
    uvWorst = Math.max(uvWorst, maxDiff(tuple(mesh.texcoords, 2, i), clothUv(i)));
    normalWorst = Math.max(normalWorst, Math.abs(Math.hypot(...tuple(mesh.normals, 3, i)) - 1));
  }
  assert.ok(worst <= TOL, `cloth: render positions off by ${worst} m`);
  assert.ok(uvWorst <= TOL, `cloth: render UVs off by ${uvWorst}`);
  assert.ok(normalWorst <= 1e-6, `cloth: render normals off unit length by ${normalWorst}`);
  console.log(`cloth.usda: render mesh of ${tris.length} triangles matches at the start ` +
              `(positions ${worst.toExponential(1)} m, UVs ${uvWorst.toExponential(1)})`);

  const points = samples(layer, 'points', allFrames);
  const normals = samples(layer, 'normals', allFrames);
  const extent = samples(layer, 'extent', allFrames);
  const velocity = samples(layer, 'primvars:velocity', allFrames);
  worst = 0;
  let velocityWorst = 0;
  for (const f of allFrames) {
    const p = points.get(f);
    assert.equal(p.length, NX * NZ, `cloth.usda frame ${f}: ${p.length} points`);
    p.forEach((x, i) => { worst = Math.max(worst, maxDiff(x, clothPosition(i, f))); });
    velocity.get(f).forEach((v, i) => {
      velocityWorst = Math.max(velocityWorst, maxDiff(v, clothVelocity(i, f)));
    });
    for (const n of normals.get(f))
      assert.ok(Math.abs(Math.hypot(...n) - 1) <= 1e-6, `cloth.usda frame ${f}: normal ${n}`);
    const [lo, hi] = extent.get(f);
    for (const x of p)
      for (let c = 0; c < 3; ++c)
        assert.ok(x[c] >= lo[c] && x[c] <= hi[c], `cloth.usda frame ${f}: ${x} outside extent`);
  }
  assert.ok(worst <= TOL, `cloth.usda: time-sampled positions off by ${worst} m`);
  // Velocities of up to 3 m/s: three times the positions' bound.
  assert.ok(velocityWorst <= 3 * TOL, `cloth.usda: primvars:velocity off by ${velocityWorst}`);
  // The cache holds the stiffness (100 + 10 i) once, and so does the layer: no time samples.
  assert.deepEqual(staticArray(layer, 'primvars:stiffness'),
                   Array.from({ length: NX * NZ }, (_, i) => 100 + 10 * i),
                   'cloth.usda: primvars:stiffness');
  console.log(`cloth.usda: ${frames} frames of positions (${worst.toExponential(1)} m), unit ` +
              `normals, extents, primvars: velocity per frame, stiffness static`);
}

// --- The sheet: face-varying UVs with a seam (u shifted by 1 on the second half of the
// triangles). The render scene numbers its vertices anew, one per distinct position and UV:
// each triangle corner must sit at its cache vertex with its corner's UV.
{
  const { mesh } = open('sheet.usda');
  const tris = clothTriangles();
  assert.equal(mesh.faceVertexCounts.length, tris.length, 'sheet: face count');
  let worst = 0, uvWorst = 0;
  const distinct = new Set();
  tris.forEach((tri, t) => tri.forEach((v, k) => {
    const at = mesh.faceVertexIndices[3 * t + k], [u, w] = clothUv(v);
    const shifted = 2 * t >= tris.length;
    worst = Math.max(worst, maxDiff(tuple(mesh.points, 3, at), clothPosition(v, 1)));
    uvWorst = Math.max(uvWorst, maxDiff(tuple(mesh.texcoords, 2, at), [u + shifted, w]));
    distinct.add(`${v},${shifted}`);
  }));
  assert.ok(worst <= TOL, `sheet: corner positions off by ${worst} m`);
  assert.ok(uvWorst <= TOL, `sheet: seam UVs off by ${uvWorst}`);
  // Fewer render vertices than (vertex, UV) pairs would merge the two sides of the seam.
  assert.ok(mesh.points.length / 3 >= distinct.size,
            `sheet: ${mesh.points.length / 3} render vertices, ${distinct.size} (vertex, UV) pairs`);
  console.log(`sheet.usda: face-varying UVs with the seam kept (${distinct.size - NX * NZ} ` +
              `vertices on it, ${mesh.points.length / 3} render vertices, ` +
              `UVs ${uvWorst.toExponential(1)})`);
}

// --- The cloth on the artist's mesh (match.file: export_caches.hpp's write_cloth_reference):
// file vertex j is cloth vertex cloth_vertex(j), Z up in centimetres.
{
  const { mesh, layer } = open('cloth_match.usda');
  expectMeta(layer, { upAxis: 'Z', metersPerUnit: 0.01 });
  const clothVertex = (j) => (j < NX * NZ ? NX * NZ - 1 - j : 2 + NX * (j - NX * NZ));
  const fileCoordinates = ([x, y, z]) => [100 * x, -100 * z, 100 * y];
  const obj = fs.readFileSync(path.join(work, 'cloth_rest.obj'), 'utf8').split('\n');
  const faces = obj.filter((l) => l.startsWith('f '))
    .map((l) => l.split(/\s+/).slice(1).map((c) => Number(c.split('/')[0]) - 1));
  assert.deepEqual(staticArray(layer, 'faceVertexCounts'), faces.map((f) => f.length),
                   'cloth_match.usda: face sizes (the file\'s)');
  assert.deepEqual(staticArray(layer, 'faceVertexIndices'), faces.flat(),
                   'cloth_match.usda: faces (the file\'s)');
  const count = NX * NZ + NZ;
  let worst = 0;
  for (const [f, p] of samples(layer, 'points', allFrames)) {
    assert.equal(p.length, count, `cloth_match.usda frame ${f}: ${p.length} points`);
    p.forEach((x, j) => {
      worst = Math.max(worst, maxDiff(x, fileCoordinates(clothPosition(clothVertex(j), f))));
    });
  }
  assert.ok(worst <= 100 * TOL, `cloth_match.usda: positions off by ${worst} cm`);
  // The render scene triangulates the quads and gives each corner its own vertex (the UVs are
  // face-varying): every corner sits on a file vertex, with that vertex's UV.
  assert.equal(mesh.faceVertexCounts.length, 2 * faces.length, 'cloth_match: render triangles');
  const used = new Set();
  for (let k = 0; k < mesh.points.length / 3; ++k) {
    const p = tuple(mesh.points, 3, k), uv = tuple(mesh.texcoords, 2, k);
    let found = -1;
    for (let j = 0; j < count && found < 0; ++j) {
      const v = clothVertex(j), [u, w] = clothUv(v);
      const expectedUv = [u + (j >= NX * NZ ? 1 : 0), w];
      if (maxDiff(p, fileCoordinates(clothPosition(v, 1))) <= 100 * TOL &&
          maxDiff(uv, expectedUv) <= TOL)
        found = j;
    }
    assert.ok(found >= 0, `cloth_match: render vertex ${k} at ${p}, UV ${uv}: no file vertex`);
    used.add(found);
  }
  assert.equal(used.size, count, 'cloth_match: render corners cover the file\'s vertices');
  console.log(`cloth_match.usda: Z up in centimetres, the file's ${faces.length} faces, ` +
              `${frames} frames of its ${count} vertices (${worst.toExponential(1)} cm)`);
}

// --- The water: a level-set mesh, its topology per frame; the sphere of radius
// 0.3 + 0.05 (f - 1) m sampled on a 0.05 m grid.
{
  const { mesh, layer } = open('water.usda');
  const counts = samples(layer, 'faceVertexCounts', allFrames);
  const indices = samples(layer, 'faceVertexIndices', allFrames);
  const points = samples(layer, 'points', allFrames);
  const normals = samples(layer, 'normals', allFrames);
  const report = [];
  for (const f of allFrames) {
    const p = points.get(f), c = counts.get(f), ix = indices.get(f);
    assert.equal(normals.get(f).length, p.length, `water.usda frame ${f}: normals`);
    assert.equal(ix.length, c.reduce((a, b) => a + b, 0), `water.usda frame ${f}: index count`);
    assert.ok(ix.every((i) => Number.isInteger(i) && i >= 0 && i < p.length),
              `water.usda frame ${f}: an index outside its ${p.length} points`);
    // Closed: every edge is shared by two faces, in opposite directions.
    const edges = new Map();
    let volume = 0;
    for (let at = 0, face = 0; face < c.length; at += c[face++]) {
      const poly = ix.slice(at, at + c[face]);
      poly.forEach((a, k) => {
        const b = poly[(k + 1) % poly.length];
        edges.set(`${a},${b}`, (edges.get(`${a},${b}`) ?? 0) + 1);
      });
      for (let k = 1; k + 1 < poly.length; ++k) {  // signed volume of the fan's tetrahedra
        const [a, b, d] = [p[poly[0]], p[poly[k]], p[poly[k + 1]]];
        volume += (a[0] * (b[1] * d[2] - b[2] * d[1]) - a[1] * (b[0] * d[2] - b[2] * d[0]) +
                   a[2] * (b[0] * d[1] - b[1] * d[0])) / 6;
      }
    }
    for (const [e, n] of edges) {
      const [a, b] = e.split(',');
      assert.ok(n === 1 && edges.get(`${b},${a}`) === 1, `water.usda frame ${f}: edge ${e} open`);
    }
    const r = 0.3 + 0.05 * (f - 1), h = 0.05;
    // The mesher puts a vertex at the mean of its voxel's edge crossings, which lie on the sphere
    // (its distance is exact at the grid points): inside it by O(h^2 / r), 0.35 h^2 / r measured
    // (2.9 mm at r = 0.3 m). The inscribed polyhedron's volume falls short by O((h / r)^2):
    // 1.15 (h / r)^2 measured (3.2 % at r = 0.3 m, 0.95 % at 0.55 m).
    const off = Math.max(...p.map((x) => Math.abs(Math.hypot(...x) - r)));
    assert.ok(off <= 0.5 * h * h / r, `water.usda frame ${f}: a vertex ${off} m off the sphere`);
    const ratio = volume / (4 / 3 * Math.PI * r ** 3);
    assert.ok(ratio >= 1 - 1.5 * (h / r) ** 2 && ratio <= 1,
              `water.usda frame ${f}: ${ratio} of the sphere's volume`);
    report.push(`${c.length} faces`);
  }
  assert.equal(mesh.points.length, 3 * points.get(1).length, 'water: render mesh is frame 1');
  console.log(`water.usda: ${frames} frames of their own topology (${report.join(', ')}), ` +
              'each closed, on its sphere, of its volume');
}
console.log('tinyusdz: all checks passed');
