// The PCD reader (plugins/formats/pcd/) on the real point clouds the drivers are checked on.
import test from 'ava';
import { readFileSync } from 'node:fs';
import { readPcd } from '../../../plugins/formats/pcd/pcd-reader.js';
import { pcdDataPath } from '../../testing/pcd-data.js';
import { countValid } from './point-cloud.js';

test('reads the three real binary_compressed 640x480 clouds: grid, valid counts, millimetres, colour', (t) => {
  const expected: Record<string, number> = {
    'table_scene_mug_stereo_textured.pcd': 209280,
    'milk_cartoon_all_small_clorox.pcd': 241407,
    'office1.pcd': 254456,
  };
  for (const [file, valid] of Object.entries(expected)) {
    const cloud = readPcd(readFileSync(pcdDataPath(file)));
    t.is(cloud.width, 640, file);
    t.is(cloud.height, 480, file);
    t.is(countValid(cloud), valid, file);
    t.is(cloud.colors?.length, 640 * 480, file);
    let minZ = Infinity,
      maxZ = -Infinity;
    for (let i = 2; i < cloud.positions.length; i += 3) {
      const z = cloud.positions[i];
      if (z === z) {
        minZ = Math.min(minZ, z);
        maxZ = Math.max(maxZ, z);
      }
    }
    // Kinect-class range, in millimetres: half a metre to a few metres.
    t.true(minZ > 400 && maxZ < 6000, `${file}: z ${minZ}..${maxZ}`);
  }
});
