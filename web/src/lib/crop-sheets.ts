import type { ApiClient } from '../api';

/** Crops per sheet, and per sheet row: a sheet is 8 × 8 cells. */
export const SHEET_SIZE = 64;
export const SHEET_COLS = 8;

/** Where the crop of the `index`-th object in rank order sits: its sheet, and its cell there. */
export function sheetPlace(index: number): { sheet: number; col: number; row: number } {
  const j = index % SHEET_SIZE;
  return { sheet: Math.floor(index / SHEET_SIZE), col: j % SHEET_COLS, row: Math.floor(j / SHEET_COLS) };
}

/** The sheets that hold the objects from `first` to `last` in rank order (inclusive). */
export function sheetsBetween(first: number, last: number): number[] {
  const out: number[] = [];
  for (let s = Math.floor(Math.max(0, first) / SHEET_SIZE); s <= Math.floor(last / SHEET_SIZE); s++)
    out.push(s);
  return out;
}

interface Sheet {
  url: string;
  /** The object ids it was rendered for, joined: a sheet for other ids is another sheet. */
  key: string;
}

/**
 * Crop sheets for a grid (POST /api/objects/crops): one request and one JPEG for 64 crops, instead
 * of 64 requests each paying the API's per-request work, so a grid's first screen of crops arrives
 * in a few requests. Each sheet is decoded before it is shown, kept as an object URL, and the
 * least recently used sheets are released past `keep`.
 */
export class CropSheets {
  private ready = new Map<number, Sheet>();
  private loading = new Map<number, string>();

  constructor(
    private api: ApiClient,
    private cell: number,
    private onChange: () => void,
    private onError: (err: unknown) => void,
    private keep = 48,
  ) {}

  /** The sheet's object URL when it holds these ids now, else null. */
  url(sheet: number, ids: readonly string[]): string | null {
    const have = this.ready.get(sheet);
    return have && have.key === ids.join(',') ? have.url : null;
  }

  /** Starts loading the sheet for these ids unless it is loaded or on its way. */
  request(sheet: number, ids: readonly string[]): void {
    const key = ids.join(',');
    const have = this.ready.get(sheet);
    if (have?.key === key) {
      this.ready.delete(sheet);
      this.ready.set(sheet, have); // most recently used last
      return;
    }
    if (this.loading.get(sheet) === key || ids.length === 0) return;
    this.loading.set(sheet, key);
    void this.load(sheet, ids, key);
  }

  private async load(sheet: number, ids: readonly string[], key: string): Promise<void> {
    try {
      const blob = await this.api.request<Blob>('/api/objects/crops', {
        method: 'POST',
        body: { object_ids: ids, cell: this.cell, cols: SHEET_COLS, pad: 0.15 },
        as: 'blob',
      });
      const url = URL.createObjectURL(blob);
      const img = new Image();
      img.src = url;
      await img.decode();
      if (this.loading.get(sheet) !== key) return URL.revokeObjectURL(url); // asked for other ids since
      this.loading.delete(sheet);
      const old = this.ready.get(sheet);
      if (old) URL.revokeObjectURL(old.url);
      this.ready.delete(sheet);
      this.ready.set(sheet, { url, key });
      for (const [s, kept] of this.ready) {
        if (this.ready.size <= this.keep) break;
        this.ready.delete(s);
        URL.revokeObjectURL(kept.url);
      }
      this.onChange();
    } catch (err) {
      if (this.loading.get(sheet) === key) this.loading.delete(sheet);
      this.onError(err);
    }
  }

  /** Forgets every sheet (the grid's objects changed). */
  clear(): void {
    for (const s of this.ready.values()) URL.revokeObjectURL(s.url);
    this.ready.clear();
    this.loading.clear();
  }
}
