// A camera's live image, with a vision service's detections (boxes, class and confidence) and
// classifications drawn over it, and its point cloud in the 3D view with that service's obstacles. The
// overlay is an SVG in the image's own pixel coordinates, so it scales with the image. The service looks
// at the very bytes the page shows (GetImage once, then GetDetections/GetClassifications on that image):
// the *FromCamera calls would each take a new frame, and a camera that moves on (an image_file folder, a
// live camera) would be labelled from a different frame than the one drawn. A stream chooser picks the
// camera's default stream, one of the streams its GetProperties lists (depth, colour), or none (the
// image is not fetched at all).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { GetImageResponse } from '../../gen/platform/component/camera/v1/camera.js';
import type { Classification, Detection } from '../../gen/platform/service/vision/v1/vision.js';
import type { ColouredDepth } from './depth-colours.js';
import { cameraApi, visionApi } from './api.js';
import { PointCloudView } from './point-cloud-view.js';
import { usePoll } from './poll.js';

/** What one vision service says about the current frame; an API it does not offer leaves an error. */
interface Seen {
  detections: Detection[];
  classifications: Classification[];
  errors: string[];
}

async function look(vision: string, frame: GetImageResponse, signal: AbortSignal): Promise<Seen> {
  const image = { name: vision, image: frame.image, mimeType: frame.mimeType, width: frame.width, height: frame.height };
  const [detections, classifications] = await Promise.allSettled([
    visionApi.getDetections(image, signal),
    visionApi.getClassifications({ ...image, n: 3 }, signal),
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

/** A polled frame as an object URL, with its depth colouring and what the vision service saw in it. */
type Frame = { url: string; image: GetImageResponse; depth?: ColouredDepth; seen?: Seen };

/** The image of one stream ('' the default), polled, with the chosen vision service's view of each frame. */
function LiveImage({ name, stream, vision }: { name: string; stream: string; vision: string }) {
  // The camera's default stream (depth for a depth camera: a 16-bit PNG, shown through a colour map by
  // depth-colours.ts, loaded only for depth), and, with a vision service chosen, what it sees in that very image.
  const frame = usePoll(
    async (signal) => {
      const image = await cameraApi.getImage({ name, mimeType: stream }, signal);
      const depth = image.mimeType.includes('depth') ? await import('./depth-colours.js').then((m) => m.colourDepth(image.image)) : undefined;
      return { image, depth, seen: vision ? await look(vision, image, signal) : undefined };
    },
    [name, stream, vision],
  );
  // `pending` is the frame being decoded (off the page, by an Image of its own); `shown` is the frame the
  // <img> shows, always one already decoded. The <img>, the overlay and the depth legend are all drawn from
  // `shown`, so the pixels and their labels change in the same render: an <img> given the src of a frame
  // still loading shows nothing until it has decoded (the image blinked out at every frame) and then shows
  // the new pixels before its load event (the labels were of the previous frame meanwhile); the src of a
  // decoded frame is shown at once. A frame that arrives while `pending` decodes waits in `queued` (a newer
  // one replaces it), so a browser slower than the poll (a busy laptop, a loaded test machine) still shows
  // every frame it can decode instead of restarting the decode at every poll.
  const [pending, setPending] = useState<Frame | undefined>();
  const [shown, setShown] = useState<Frame | undefined>();
  const decoding = useRef(false);
  const queued = useRef<Frame | undefined>(undefined);
  // The object URLs made, each with the Image that decoded it: that Image holds the decoded frame, so the
  // <img> given its URL finds it decoded (without it the browser may have dropped it, and loads it again).
  const urls = useRef(new Map<string, HTMLImageElement | undefined>());
  const live = useRef(true);
  useEffect(() => {
    const value = frame.value;
    if (!value) return;
    const type = value.image.mimeType.endsWith('png') ? 'image/png' : value.image.mimeType;
    const url = URL.createObjectURL(value.depth?.png ?? new Blob([value.image.image as BlobPart], { type }));
    urls.current.set(url, undefined);
    if (decoding.current) {
      queued.current = { url, ...value };
      return;
    }
    decoding.current = true;
    setPending({ url, ...value });
  }, [frame.value]);
  useEffect(() => {
    live.current = true;
    return () => {
      live.current = false;
      for (const u of urls.current.keys()) URL.revokeObjectURL(u);
    };
  }, []);
  useEffect(() => {
    if (!pending) return;
    const decoder = new Image();
    urls.current.set(pending.url, decoder);
    decoder.src = pending.url;
    decoder.decode().then(
      () => settled(pending, true),
      () => settled(pending, false),
    );
  }, [pending]);
  /** `done` has decoded (or failed to): it is shown, and the queued frame, if any, is decoded next. */
  function settled(done: Frame, decoded: boolean) {
    if (!live.current) return;
    const next = queued.current;
    queued.current = undefined;
    decoding.current = next !== undefined;
    if (decoded) setShown(done);
    setPending(next);
    // Every URL but the frame shown and the one decoding next is done with.
    const keep = new Set([decoded ? done.url : shown?.url, next?.url]);
    for (const u of urls.current.keys()) {
      if (keep.has(u)) continue;
      URL.revokeObjectURL(u);
      urls.current.delete(u);
    }
  }
  const seen = shown?.seen;
  const url = shown?.url;
  return (
    <div>
      {shown?.depth ? (
        <p class="muted" data-testid={`depth-legend-${name}`}>
          depth colour map: red {(shown.depth.nearMm / 1000).toFixed(2)} m (near) to blue {(shown.depth.farMm / 1000).toFixed(2)} m (far); black: no depth
        </p>
      ) : null}
      <div class="overlay">
        {url ? <img src={url} alt={`image of ${name}`} class="camera" data-mime={shown?.image.mimeType} /> : '…'}
        {shown && seen ? <Overlay width={shown.image.width} height={shown.image.height} seen={seen} /> : null}
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
    </div>
  );
}

/** A stream's name on the page: depth and colour by their mime types, anything else as its type. */
export function streamLabel(mimeType: string): string {
  if (mimeType.includes('depth')) return 'depth';
  if (mimeType === 'image/png') return 'colour';
  if (mimeType === 'image/jpeg') return 'colour (JPEG)';
  return mimeType;
}

const OFF = 'off';

export function CameraView({ name, visions }: { name: string; visions: string[] }) {
  const [vision, setVision] = useState('');
  const [stream, setStream] = useState('');
  // The streams GetImage serves, from the camera's properties; a camera without properties keeps only
  // its default stream (no error shown: the chooser simply offers less).
  const [streams, setStreams] = useState<string[]>([]);
  useEffect(() => {
    cameraApi.getProperties({ name }).then(
      (p) => setStreams(p.mimeTypes),
      () => setStreams([]),
    );
  }, [name]);
  return (
    <div>
      <div class="row">
        <label>
          stream{' '}
          <select aria-label={`stream of ${name}`} value={stream} onChange={(e) => setStream((e.target as HTMLSelectElement).value)}>
            <option value="">default</option>
            {streams.map((m) => (
              <option key={m} value={m}>
                {streamLabel(m)}
              </option>
            ))}
            <option value={OFF}>none (not fetched)</option>
          </select>
        </label>
        {visions.length ? (
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
        ) : null}
      </div>
      {stream === OFF ? <p class="muted">The image of {name} is not fetched.</p> : <LiveImage key={stream} name={name} stream={stream} vision={vision} />}
      <PointCloudView name={name} vision={vision} />
    </div>
  );
}
