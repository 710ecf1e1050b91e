import { describe, expect, it } from '@jest/globals';
import { sheetPlace, sheetsBetween } from './crop-sheets';

describe('crop sheets', () => {
  it('places the objects in rank order, 64 to a sheet of 8 × 8 cells, row by row', () => {
    expect(sheetPlace(0)).toEqual({ sheet: 0, col: 0, row: 0 });
    expect(sheetPlace(9)).toEqual({ sheet: 0, col: 1, row: 1 });
    expect(sheetPlace(63)).toEqual({ sheet: 0, col: 7, row: 7 });
    expect(sheetPlace(64)).toEqual({ sheet: 1, col: 0, row: 0 });
    expect(sheetPlace(200)).toEqual({ sheet: 3, col: 0, row: 1 });
  });

  it('names the sheets a range of objects needs', () => {
    expect(sheetsBetween(0, 0)).toEqual([0]);
    expect(sheetsBetween(60, 130)).toEqual([0, 1, 2]);
    expect(sheetsBetween(-5, 63)).toEqual([0]);
    expect(sheetsBetween(64, 127)).toEqual([1]);
  });
});
