import { describe, expect, it } from '@jest/globals';
import { click, emptySelection, moveFocus, selectVisible, toggleFocused } from './selection';

const order = ['a', 'b', 'c', 'd', 'e', 'f'];
const ids = (s: { ids: ReadonlySet<string> }) => [...s.ids].sort();

describe('grid selection', () => {
  it('selects one on click, toggles with Ctrl, and takes the range from the anchor with Shift', () => {
    let s = click(emptySelection(), order, 1, {});
    expect(ids(s)).toEqual(['b']);
    s = click(s, order, 4, { extend: true });
    expect(ids(s)).toEqual(['b', 'c', 'd', 'e']);
    s = click(s, order, 0, { extend: true });
    expect(ids(s)).toEqual(['a', 'b']);
    s = click(s, order, 5, { toggle: true });
    expect(ids(s)).toEqual(['a', 'b', 'f']);
    s = click(s, order, 5, { toggle: true });
    expect(ids(s)).toEqual(['a', 'b']);
    // The toggled item is the new anchor.
    s = click(s, order, 3, { toggle: true });
    s = click(s, order, 5, { extend: true });
    expect(ids(s)).toEqual(['d', 'e', 'f']);
  });

  it('moves the focus within bounds, and Shift+arrows extend the range from the anchor', () => {
    let s = click(emptySelection(), order, 2, {});
    s = moveFocus(s, order, 3, true);
    expect(ids(s)).toEqual(['c', 'd', 'e', 'f']);
    s = moveFocus(s, order, 10, false);
    expect(s.focus).toBe(5);
    s = moveFocus(s, order, -10, false);
    expect(s.focus).toBe(0);
    expect(ids(toggleFocused(s, order))).toEqual(['a', 'c', 'd', 'e', 'f']);
  });

  it('adds the visible cells to the selection', () => {
    const s = selectVisible(click(emptySelection(), order, 0, {}), order, 3, 4);
    expect(ids(s)).toEqual(['a', 'd', 'e']);
  });
});
