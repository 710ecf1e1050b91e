import { useEffect, useState } from 'preact/hooks';

/** Where the app is: the path and its query, as a person can bookmark and share it. */
export interface Location {
  path: string;
  query: URLSearchParams;
}

const read = (): Location => ({
  path: window.location.pathname,
  query: new URLSearchParams(window.location.search),
});

const listeners = new Set<() => void>();
window.addEventListener('popstate', () => listeners.forEach((l) => l()));

/** Goes to a URL inside the app; `replace` keeps the back button on the page before (e.g. filter edits). */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (opts.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  listeners.forEach((l) => l());
}

/** The current location; re-renders on navigate and on the browser's back and forward. */
export function useLocation(): Location {
  const [location, setLocation] = useState(read);
  useEffect(() => {
    const update = () => setLocation(read());
    listeners.add(update);
    return () => void listeners.delete(update);
  }, []);
  return location;
}

/** The path and query of the current location, to come back to after signing in. */
export const here = (): string => window.location.pathname + window.location.search;

/** A URL with its query built from the non-empty values. */
export function withQuery(path: string, query: Record<string, string | undefined | null>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}
