/**
 * YOLO labels in the layout Ultralytics reads (docs/datasets.md): `data.yaml`, `images/<split>/`,
 * `labels/<split>/<stem>.txt` with one line per object: the class index and the box centre and
 * size normalised by the image size (`detect`), or the class index and a normalised polygon
 * (`segment`).
 */

export type YoloTask = 'detect' | 'segment';

const clamp01 = (v: number): number => Math.min(1, Math.max(0, v));
const fmt = (v: number): string => clamp01(v).toFixed(6);

export function yoloBoxLine(
  classIndex: number,
  bbox: readonly number[],
  width: number,
  height: number,
): string {
  const [x1, y1, x2, y2] = bbox as [number, number, number, number];
  return `${classIndex} ${fmt((x1 + x2) / 2 / width)} ${fmt((y1 + y2) / 2 / height)} ${fmt((x2 - x1) / width)} ${fmt((y2 - y1) / height)}`;
}

/** The largest ring of the mask (YOLO takes one polygon per object), or the box's corners. */
export function yoloPolygonLine(
  classIndex: number,
  bbox: readonly number[],
  polygons: number[][] | null,
  width: number,
  height: number,
): string {
  const rings = (polygons ?? []).filter((r) => r.length >= 6);
  const [x1, y1, x2, y2] = bbox as [number, number, number, number];
  const ring = rings.length
    ? rings.reduce((best, r) => (r.length > best.length ? r : best))
    : [x1, y1, x2, y1, x2, y2, x1, y2];
  const coords = ring.map((v, i) => fmt(v / (i % 2 === 0 ? width : height)));
  return `${classIndex} ${coords.join(' ')}`;
}

/** `data.yaml`: names by index, paths relative to the dataset root. */
export function yoloDataYaml(names: readonly string[], splits: readonly string[]): string {
  const lines = ['# drivelab export (Ultralytics YOLO layout)', 'path: .'];
  for (const split of splits) lines.push(`${split}: images/${split}`);
  lines.push(`nc: ${names.length}`, 'names:');
  names.forEach((name, i) => lines.push(`  ${i}: ${JSON.stringify(name)}`));
  return `${lines.join('\n')}\n`;
}
