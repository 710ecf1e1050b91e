import { useEffect, useState } from 'preact/hooks';
import { readableError, type ApiClient } from '../api';
import type { MediaUrls } from '../lib/media';

/** One frame of GET /api/frames/{id}/filmstrip. */
export interface StripFrame {
  id: string;
  index: number;
  objects: { total: number; by_state: Record<string, number> };
  current: boolean;
}

/**
 * The frames around the one in the editor, in session order, each with its object count and the
 * number still waiting for review; a click (or F / D in the editor) opens another frame.
 */
export function Filmstrip(props: {
  api: ApiClient;
  media: MediaUrls;
  frameId: string;
  /** Bumped when the frame's objects change, so the counts follow. */
  revision: number;
  onFrames: (frames: StripFrame[]) => void;
  onOpen: (frameId: string) => void;
}) {
  const [frames, setFrames] = useState<StripFrame[]>([]);
  const [token, setToken] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let stale = false;
    Promise.all([
      props.api.get<{ frames: StripFrame[] }>(`/api/frames/${props.frameId}/filmstrip`, {
        before: 6,
        after: 6,
      }),
      props.media.current(),
    ])
      .then(([strip, t]) => {
        if (stale) return;
        setFrames(strip.frames);
        setToken(t);
        props.onFrames(strip.frames);
      })
      .catch((err: unknown) => !stale && setError(readableError(err)));
    return () => {
      stale = true;
    };
  }, [props.frameId, props.revision]);

  if (error) return <nav class="filmstrip muted">The frames around this one could not be read: {error}</nav>;
  return (
    <nav class="filmstrip" aria-label="Frames of the session">
      {frames.map((f) => {
        const waiting = (f.objects.by_state.review ?? 0) + (f.objects.by_state.submitted ?? 0);
        return (
          <button
            type="button"
            key={f.id}
            class={f.current ? 'strip-frame current' : 'strip-frame'}
            aria-current={f.current ? 'true' : undefined}
            aria-label={`Frame ${f.index}: ${f.objects.total} objects, ${waiting} to review`}
            onClick={() => !f.current && props.onOpen(f.id)}
          >
            {token && (
              <img
                alt=""
                loading="lazy"
                src={`/api/frames/${f.id}/image?${new URLSearchParams({ media_token: token })}`}
              />
            )}
            <span class="strip-label">
              #{f.index} · {f.objects.total}
              {waiting > 0 && <span class="waiting"> · {waiting} open</span>}
            </span>
          </button>
        );
      })}
    </nav>
  );
}
