import type { CommitFile } from '../datasets/manifest';

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

/**
 * Where files found now (rebuilt, or read back from storage) differ from a commit's manifest, by
 * path: a file not found now (`now: null`), one the commit did not hold (`original: null`), and
 * for a file in both, its hash and its size.
 */
export function manifestDifferences(
  original: readonly CommitFile[],
  found: readonly CommitFile[],
): Difference[] {
  const before = new Map(original.map((f) => [f.path, f]));
  const after = new Map(found.map((f) => [f.path, f]));
  const paths = [...new Set([...before.keys(), ...after.keys()])].sort();
  return paths.flatMap((path): Difference[] => {
    const a = before.get(path);
    const b = after.get(path);
    if (!a) return [{ path, original: null, now: b!.sha256 }];
    if (!b) return [{ path, original: a.sha256, now: null }];
    const out: Difference[] = [];
    if (a.sha256 !== b.sha256) out.push({ path: `${path}.sha256`, original: a.sha256, now: b.sha256 });
    if (a.size !== b.size) out.push({ path: `${path}.size`, original: a.size, now: b.size });
    return out;
  });
}
