// An image's thumbnail (never its full content: GET /thumbnails/<id>?size=N) with its bounding boxes
// drawn over it, positioned in percent of the image so they fit whatever size it is shown at.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { BoundingBox } from '../../../gen/platform/app/data/v1/data.js';
import type { CloudApi } from '../api/client.js';

export function Boxes({ boxes }: { boxes: BoundingBox[] }) {
  return (
    <>
      {boxes.map((b) => (
        <div
          key={b.id}
          class="bbox"
          data-testid={`bbox-${b.label}`}
          title={b.label}
          style={{
            left: `${b.xMinNormalized * 100}%`,
            top: `${b.yMinNormalized * 100}%`,
            width: `${(b.xMaxNormalized - b.xMinNormalized) * 100}%`,
            height: `${(b.yMaxNormalized - b.yMinNormalized) * 100}%`,
          }}
        >
          <span>{b.label}</span>
        </div>
      ))}
    </>
  );
}

export function Thumbnail(props: {
  api: CloudApi;
  id: string;
  size: number;
  boxes: BoundingBox[];
  alt: string;
  /** Drawn over the image (the box being drawn). */
  children?: ComponentChildren;
  onImage?(image: HTMLImageElement | null): void;
  /** The image is shown (or failed to load). */
  onSettled?(): void;
}) {
  const [url, setUrl] = useState('');
  const [error, setError] = useState('');
  useEffect(() => {
    let live = true;
    let made = '';
    props.api.thumbnail(props.id, props.size).then(
      (u) => {
        made = u;
        if (live) setUrl(u);
        else URL.revokeObjectURL(u);
      },
      (err: Error) => {
        if (!live) return;
        setError(err.message);
        props.onSettled?.();
      },
    );
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [props.id, props.size]);
  return (
    <div class="thumb" style={{ minWidth: '4em', minHeight: '3em' }}>
      {url ? (
        <img src={url} alt={props.alt} ref={props.onImage} draggable={false} onLoad={props.onSettled} onError={props.onSettled} />
      ) : (
        <span class="placeholder">{error || '…'}</span>
      )}
      {url && <Boxes boxes={props.boxes} />}
      {props.children}
    </div>
  );
}
