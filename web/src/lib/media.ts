import type { ApiClient } from '../api';

interface MediaToken {
  media_token: string;
  expires_at: string;
}

/** Renew the media token this long before it expires, so no image load races its expiry. */
const AHEAD_MS = 60_000;

/**
 * URLs of frame images and crops that an `<img>` or a canvas can load without an Authorization
 * header: they carry a short-lived media token (POST /api/auth/media-token), which reads images
 * and crops only.
 */
export class MediaUrls {
  private token: MediaToken | null = null;
  private pending: Promise<MediaToken> | null = null;

  constructor(private api: ApiClient) {}

  /** The current media token, renewed when it nears its expiry. */
  async current(): Promise<string> {
    if (this.token && Date.parse(this.token.expires_at) - Date.now() > AHEAD_MS)
      return this.token.media_token;
    this.pending ??= this.api.post<MediaToken>('/api/auth/media-token').finally(() => (this.pending = null));
    this.token = await this.pending;
    return this.token.media_token;
  }

  async frameImage(frameId: string, variant: 'redacted' | 'original' = 'redacted'): Promise<string> {
    const q = new URLSearchParams({ media_token: await this.current() });
    if (variant === 'original') q.set('variant', 'original');
    return `/api/frames/${frameId}/image?${q}`;
  }
}

/** Loads an image fully (decoded), so painting it never waits. */
export async function loadImage(url: string, signal?: AbortSignal): Promise<HTMLImageElement> {
  const img = new Image();
  img.decoding = 'async';
  img.src = url;
  const abort = () => (img.src = '');
  signal?.addEventListener('abort', abort, { once: true });
  try {
    await img.decode();
  } catch {
    throw new Error(`the image at ${url.split('?')[0]} could not be loaded`);
  } finally {
    signal?.removeEventListener('abort', abort);
  }
  return img;
}
