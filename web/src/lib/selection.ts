/**
 * Selection in a grid of items, as file managers do it: a click selects one, Ctrl+click toggles
 * one, Shift+click selects the range from the anchor; arrows move the focus, Shift+arrows extend
 * the range, Space toggles the focused item.
 */
export interface Selection {
  ids: ReadonlySet<string>;
  /** Where a Shift range starts: the last item clicked or toggled without Shift. */
  anchor: number | null;
  focus: number;
}

export const emptySelection = (): Selection => ({ ids: new Set(), anchor: null, focus: 0 });

const range = (order: readonly string[], a: number, b: number): Set<string> =>
  new Set(order.slice(Math.min(a, b), Math.max(a, b) + 1));

export function click(
  sel: Selection,
  order: readonly string[],
  index: number,
  mods: { toggle?: boolean; extend?: boolean },
): Selection {
  const id = order[index];
  if (id === undefined) return sel;
  if (mods.extend)
    return { ids: range(order, sel.anchor ?? index, index), anchor: sel.anchor ?? index, focus: index };
  if (mods.toggle) {
    const ids = new Set(sel.ids);
    if (ids.has(id)) ids.delete(id);
    else ids.add(id);
    return { ids, anchor: index, focus: index };
  }
  return { ids: new Set([id]), anchor: index, focus: index };
}

/** Moves the focus by `delta` (±1 across, ±columns down and up); with `extend`, the range follows it. */
export function moveFocus(
  sel: Selection,
  order: readonly string[],
  delta: number,
  extend: boolean,
): Selection {
  if (order.length === 0) return sel;
  const focus = Math.min(order.length - 1, Math.max(0, sel.focus + delta));
  if (!extend) return { ...sel, focus };
  const anchor = sel.anchor ?? sel.focus;
  return { ids: range(order, anchor, focus), anchor, focus };
}

export function toggleFocused(sel: Selection, order: readonly string[]): Selection {
  return click(sel, order, sel.focus, { toggle: true });
}

/** Everything from `first` to `last` (the cells on screen), added to what is selected. */
export function selectVisible(
  sel: Selection,
  order: readonly string[],
  first: number,
  last: number,
): Selection {
  return { ...sel, ids: new Set([...sel.ids, ...range(order, first, last)]) };
}
