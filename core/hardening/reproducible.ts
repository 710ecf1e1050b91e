/** Comparing a result computed again with the one stored (activities/hardening/reproducible.ts). */

export interface Difference {
  path: string;
  original: unknown;
  now: unknown;
}

/** Where two JSON values differ, path by path (numbers equal to 1e-12 relative count as equal). */
export function jsonDifferences(original: unknown, now: unknown, path = ''): Difference[] {
  if (typeof original === 'number' && typeof now === 'number') {
    const same = original === now || Math.abs(original - now) <= 1e-12 * Math.max(1, Math.abs(original));
    return same ? [] : [{ path, original, now }];
  }
  if (Array.isArray(original) && Array.isArray(now)) {
    if (original.length !== now.length)
      return [{ path: `${path}.length`, original: original.length, now: now.length }];
    return original.flatMap((v, i) => jsonDifferences(v, now[i], `${path}[${i}]`));
  }
  if (
    original &&
    now &&
    typeof original === 'object' &&
    typeof now === 'object' &&
    !Array.isArray(original) &&
    !Array.isArray(now)
  ) {
    const a = original as Record<string, unknown>;
    const b = now as Record<string, unknown>;
    return [...new Set([...Object.keys(a), ...Object.keys(b)])]
      .sort()
      .flatMap((k) => jsonDifferences(a[k], b[k], path ? `${path}.${k}` : k));
  }
  return JSON.stringify(original) === JSON.stringify(now)
    ? []
    : [{ path, original: original ?? null, now: now ?? null }];
}
