// The camera's point cloud in a 3D view: a perspective projection onto a 2D canvas, coloured by depth
// (or the cloud's own colours), turned by dragging. The PCD bytes are parsed with the platform's own PCD
// reader (plugins/formats/pcd/) (any encoding, binary_compressed included); positions are in millimetres. With a vision service
// chosen, its obstacles (GetObjectPointClouds: boxes in millimetres in the camera frame) are drawn over
// the points as wireframe boxes.
import { useEffect, useRef, useState } from 'preact/hooks';
import { readPcd } from '../../plugins/formats/pcd/pcd-reader.js';
import type { PointCloudObject } from '../../gen/platform/service/vision/v1/vision.js';
import type { PointCloud } from '../../plugins/formats/pcd/pcd-reader.js';
import { cameraApi, visionApi } from './api.js';

const WIDTH = 480;
const HEIGHT = 360;

interface View {
  yaw: number;
  pitch: number;
}

/** An obstacle's box: centre and extents in millimetres, in the camera frame. */
export interface Box {
  center: [number, number, number];
  dims: [number, number, number];
  label: string;
}

export function boxesOf(objects: PointCloudObject[]): Box[] {
  return objects.flatMap((o) =>
    (o.geometries?.geometries ?? []).flatMap((g) =>
      g.center && g.box?.dimsMm
        ? [{ center: [g.center.x, g.center.y, g.center.z], dims: [g.box.dimsMm.x, g.box.dimsMm.y, g.box.dimsMm.z], label: g.label }]
        : [],
    ),
  ) as Box[];
}

/** The 12 edges of a box, as pairs of corner indices (corner bits: x, y, z). */
const EDGES = [
  [0, 1],
  [2, 3],
  [4, 5],
  [6, 7],
  [0, 2],
  [1, 3],
  [4, 6],
  [5, 7],
  [0, 4],
  [1, 5],
  [2, 6],
  [3, 7],
];
export const BOX_COLOUR = '#ff00ff';

/**
 * Draws the cloud seen from a camera orbiting its centre, then the boxes; returns how many pixels its
 * points cover and how many boxes were drawn in view.
 */
function draw(canvas: HTMLCanvasElement, cloud: PointCloud, view: View, boxes: Box[]): { shown: number; boxes: number } {
  const ctx = canvas.getContext('2d')!;
  const image = ctx.createImageData(WIDTH, HEIGHT);
  const p = cloud.positions;
  let cx = 0,
    cy = 0,
    cz = 0,
    n = 0;
  let far = 0;
  for (let i = 0; i < p.length; i += 3) {
    if (Number.isNaN(p[i])) continue;
    cx += p[i];
    cy += p[i + 1];
    cz += p[i + 2];
    n++;
  }
  if (n === 0) return { shown: 0, boxes: 0 };
  cx /= n;
  cy /= n;
  cz /= n;
  for (let i = 0; i < p.length; i += 3) if (!Number.isNaN(p[i])) far = Math.max(far, Math.hypot(p[i] - cx, p[i + 1] - cy, p[i + 2] - cz));
  const distance = far * 2.2 || 1;
  const focal = WIDTH * 0.9;
  const [sy, cyaw, sp, cp] = [Math.sin(view.yaw), Math.cos(view.yaw), Math.sin(view.pitch), Math.cos(view.pitch)];
  /** A camera-frame point (mm) to canvas pixels, or undefined behind the eye. */
  const project = (x: number, y: number, z: number): [number, number] | undefined => {
    const x0 = x - cx,
      y0 = y - cy,
      z0 = z - cz;
    const x1 = cyaw * x0 + sy * z0,
      z1 = -sy * x0 + cyaw * z0;
    const y2 = cp * y0 - sp * z1,
      z2 = sp * y0 + cp * z1 + distance;
    return z2 <= 1 ? undefined : [WIDTH / 2 + (focal * x1) / z2, HEIGHT / 2 + (focal * y2) / z2];
  };
  const depth = new Float32Array(WIDTH * HEIGHT).fill(Infinity);
  let shown = 0;
  for (let i = 0, k = 0; i < p.length; i += 3, k++) {
    if (Number.isNaN(p[i])) continue;
    // Centre, turn about the vertical (y) then the horizontal axis, and push away from the eye.
    const x0 = p[i] - cx,
      y0 = p[i + 1] - cy,
      z0 = p[i + 2] - cz;
    const x1 = cyaw * x0 + sy * z0,
      z1 = -sy * x0 + cyaw * z0;
    const y2 = cp * y0 - sp * z1,
      z2 = sp * y0 + cp * z1 + distance;
    if (z2 <= 1) continue;
    const u = Math.round(WIDTH / 2 + (focal * x1) / z2),
      v = Math.round(HEIGHT / 2 + (focal * y2) / z2);
    if (u < 0 || v < 0 || u >= WIDTH || v >= HEIGHT) continue;
    const at = v * WIDTH + u;
    if (z2 >= depth[at]) continue;
    // Pixels, not points: a nearer point that hides another paints the same pixel.
    if (depth[at] === Infinity) shown++;
    depth[at] = z2;
    const c = cloud.colors?.[k];
    const near = Math.max(0, Math.min(1, (p[i + 2] - cz + far) / (2 * far || 1)));
    image.data[at * 4] = c !== undefined ? (c >>> 16) & 255 : 255 * (1 - near);
    image.data[at * 4 + 1] = c !== undefined ? (c >>> 8) & 255 : 80 + 120 * near;
    image.data[at * 4 + 2] = c !== undefined ? c & 255 : 255 * near;
    image.data[at * 4 + 3] = 255;
  }
  ctx.fillStyle = '#111';
  ctx.fillRect(0, 0, WIDTH, HEIGHT);
  // Points over the background: putImageData replaces pixels, so draw through a second canvas.
  const layer = new OffscreenCanvas(WIDTH, HEIGHT);
  layer.getContext('2d')!.putImageData(image, 0, 0);
  ctx.drawImage(layer, 0, 0);
  let drawn = 0;
  ctx.strokeStyle = BOX_COLOUR;
  ctx.fillStyle = BOX_COLOUR;
  ctx.lineWidth = 2;
  ctx.font = '12px sans-serif';
  for (const box of boxes) {
    const corners = [0, 1, 2, 3, 4, 5, 6, 7].map((bits) =>
      project(
        box.center[0] + (bits & 1 ? 0.5 : -0.5) * box.dims[0],
        box.center[1] + (bits & 2 ? 0.5 : -0.5) * box.dims[1],
        box.center[2] + (bits & 4 ? 0.5 : -0.5) * box.dims[2],
      ),
    );
    if (corners.some((c) => c === undefined)) continue;
    ctx.beginPath();
    for (const [a, b] of EDGES) {
      ctx.moveTo(...corners[a]!);
      ctx.lineTo(...corners[b]!);
    }
    ctx.stroke();
    ctx.fillText(box.label, corners[0]![0], corners[0]![1] - 3);
    drawn++;
  }
  return { shown, boxes: drawn };
}

/** `vision`: a vision service whose obstacles for this camera are drawn in the view ('' for none). */
export function PointCloudView({ name, vision }: { name: string; vision: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const [cloud, setCloud] = useState<PointCloud>();
  const [boxes, setBoxes] = useState<Box[]>([]);
  const [view, setView] = useState<View>({ yaw: 0.5, pitch: -0.4 });
  const [error, setError] = useState('');
  const [visionError, setVisionError] = useState('');
  const [drawn, setDrawn] = useState({ shown: 0, boxes: 0 });
  const load = () => {
    setError('');
    setVisionError('');
    cameraApi
      .getPointCloud({ name, mimeType: 'pointcloud/pcd' })
      .then((reply) => setCloud(readPcd(reply.pointCloud)))
      .catch((err: Error) => setError(err.message));
    setBoxes([]);
    if (vision)
      visionApi
        .getObjectPointClouds({ name: vision, cameraName: name })
        .then((reply) => setBoxes(boxesOf(reply.objects)))
        .catch((err: Error) => setVisionError(`obstacles of ${vision}: ${err.message}`));
  };
  useEffect(load, [name, vision]);
  useEffect(() => {
    if (cloud && canvas.current) setDrawn(draw(canvas.current, cloud, view, boxes));
  }, [cloud, view, boxes]);
  const shown = drawn.shown;
  const drag = (e: PointerEvent) => {
    if (e.buttons !== 1) return;
    setView((v) => ({ yaw: v.yaw + e.movementX / 150, pitch: Math.max(-1.5, Math.min(1.5, v.pitch + e.movementY / 150)) }));
  };
  return (
    <div>
      <canvas
        ref={canvas}
        width={WIDTH}
        height={HEIGHT}
        data-testid={`pointcloud-${name}`}
        data-points={shown}
        data-boxes={drawn.boxes}
        onPointerMove={drag}
        style={{ touchAction: 'none', cursor: 'grab' }}
      />
      <p>
        {cloud ? `${cloud.width * cloud.height} points over ${shown} pixels${vision ? `, ${boxes.length} obstacles of ${vision}` : ''} (drag to turn)` : '…'}{' '}
        <button onClick={load}>Refresh point cloud</button>
      </p>
      {visionError ? (
        <p class="error" role="alert">
          {visionError}
        </p>
      ) : null}
      {error ? (
        <p class="error" role="alert">
          {error}
        </p>
      ) : null}
    </div>
  );
}
