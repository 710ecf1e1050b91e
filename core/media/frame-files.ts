/**
 * Names inside a folder or zip of frames: which ones are frames, which are hostile, and their order.
 */
const FRAME_EXTENSIONS = new Map([
  ['.jpg', 'image/jpeg'],
  ['.jpeg', 'image/jpeg'],
  ['.png', 'image/png'],
  ['.webp', 'image/webp'],
]);

/** Why an archive entry name is refused (path traversal, absolute or drive paths), or null. */
export function unsafeEntryName(name: string): string | null {
  if (name.length === 0) return 'empty name';
  if (name.includes('\0')) return 'NUL byte in name';
  const normal = name.replace(/\\/g, '/');
  if (normal.startsWith('/')) return 'absolute path';
  if (/^[a-zA-Z]:/.test(normal)) return 'drive-letter path';
  if (normal.split('/').includes('..')) return 'path traversal (..)';
  return null;
}

/** The frame content type of a file name, or null for anything else (folders, metadata, hidden files). */
export function frameContentType(name: string): string | null {
  const normal = name.replace(/\\/g, '/');
  if (normal.endsWith('/')) return null;
  if (normal.split('/').some((part) => part.startsWith('.') || part === '__MACOSX')) return null;
  const dot = normal.lastIndexOf('.');
  return dot < 0 ? null : (FRAME_EXTENSIONS.get(normal.slice(dot).toLowerCase()) ?? null);
}

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });
/** Natural order, so frame_2 sorts before frame_10. */
export const compareFrameNames = (a: string, b: string): number => collator.compare(a, b);

export const FRAME_FILE_EXTENSIONS = [...FRAME_EXTENSIONS.keys()];
