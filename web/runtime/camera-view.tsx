// A camera's live image, with a vision service's detections (boxes, class and confidence) and
// classifications drawn over it, and its point cloud in the 3D view with that service's obstacles. The
// overlay is an SVG in the image's own pixel coordinates, so it scales with the image.
import { useEffect, useState } from 'preact/hooks';
import type { Classification, Detection } from '../../gen/platform/service/vision/v1/vision.js';
import { cameraApi, visionApi } from './api.js';
import { PointCloudView } from './point-cloud-view.js';
import { usePoll } from './poll.js';

/** What one vision service says about the current frame; an API it does not offer leaves an error. */
interface Seen {
  detections: Detection[];
  classifications: Classification[];
  errors: string[];
}

async function look(vision: string, camera: string): Promise<Seen> {
  const [detections, classifications] = await Promise.allSettled([
    visionApi.getDetectionsFromCamera({ name: vision, cameraName: camera }),
    visionApi.getClassificationsFromCamera({ name: vision, cameraName: camera, n: 3 }),
  ]);
  return {
    detections: detections.status === 'fulfilled' ? detections.value.detections : [],
    classifications: classifications.status === 'fulfilled' ? classifications.value.classifications : [],
    errors: [detections, classifications].flatMap((r) => (r.status === 'rejected' ? [(r.reason as Error).message] : [])),
  };
}

function Overlay({ width, height, seen }: { width: number; height: number; seen: Seen }) {
  const size = Math.max(10, Math.round(height / 25));
  return (
    <svg class="overlay-svg" viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="none" data-testid="vision-overlay">
      {seen.detections.map((d, i) => (
        <g key={i} class="detection">
          <rect x={d.xMin} y={d.yMin} width={d.xMax - d.xMin} height={d.yMax - d.yMin} fill="none" stroke="#ff00ff" stroke-width={Math.max(1, size / 5)} />
          <text x={d.xMin + 2} y={Math.max(size, d.yMin - 2)} font-size={size} fill="#ff00ff">
            {d.className} {(d.confidence * 100).toFixed(0)}%
          </text>
        </g>
      ))}
      {seen.classifications.map((c, i) => (
        <text key={i} class="classification" x={4} y={(i + 1) * size * 1.2} font-size={size} fill="#fff" stroke="#000" stroke-width={size / 12}>
          {c.className} {(c.confidence * 100).toFixed(0)}%
        </text>
      ))}
    </svg>
  );
}

export function CameraView({ name, visions }: { name: string; visions: string[] }) {
  const [vision, setVision] = useState('');
  const [url, setUrl] = useState('');
  // The camera's default stream (depth for a depth camera: a 16-bit PNG, which the browser shows as grey),
  // and, with a vision service chosen, what it sees in the camera's current frame.
  const frame = usePoll(async () => ({ image: await cameraApi.getImage({ name }), seen: vision ? await look(vision, name) : undefined }), [name, vision]);
  const image = frame.value?.image;
  useEffect(() => {
    if (!image) return;
    const type = image.mimeType.endsWith('png') ? 'image/png' : image.mimeType;
    const next = URL.createObjectURL(new Blob([image.image as BlobPart], { type }));
    setUrl(next);
    return () => URL.revokeObjectURL(next);
  }, [image]);
  const seen = frame.value?.seen;
  return (
    <div>
      {visions.length ? (
        <div class="row">
          <label>
            vision overlay{' '}
            <select aria-label={`vision overlay of ${name}`} value={vision} onChange={(e) => setVision((e.target as HTMLSelectElement).value)}>
              <option value="">none</option>
              {visions.map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </select>
          </label>
        </div>
      ) : null}
      <div class="overlay">
        {url ? <img src={url} alt={`image of ${name}`} class="camera" /> : '…'}
        {url && seen && image ? <Overlay width={image.width} height={image.height} seen={seen} /> : null}
      </div>
      {seen ? (
        <p data-testid={`vision-${name}`}>
          {seen.detections.length} detections
          {seen.classifications.length ? `; ${seen.classifications.map((c) => `${c.className} ${(c.confidence * 100).toFixed(0)}%`).join(', ')}` : ''}
          {seen.errors.map((e) => (
            <span key={e} class="note">
              {' '}
              · {e}
            </span>
          ))}
        </p>
      ) : null}
      {frame.error ? (
        <p class="error" role="alert">
          {frame.error}
        </p>
      ) : null}
      <PointCloudView name={name} vision={vision} />
    </div>
  );
}
