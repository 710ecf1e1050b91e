/**
 * The frame editor's bindings (docs/web.md), chosen to match the keyboard review where the two
 * overlap (A, R, C, Tab, F/D, 0, Z, ?) and CVAT's drawing habits otherwise (one letter per tool,
 * Enter to finish a shape, Esc to cancel). `?` shows this table.
 */
export type EditorCommand =
  | 'selectTool'
  | 'boxTool'
  | 'polygonTool'
  | 'polylineTool'
  | 'keypointTool'
  | 'finish'
  | 'cancel'
  | 'next'
  | 'previous'
  | 'relabel'
  | 'accept'
  | 'reject'
  | 'remove'
  | 'rotateLeft'
  | 'rotateRight'
  | 'nudgeLeft'
  | 'nudgeRight'
  | 'nudgeUp'
  | 'nudgeDown'
  | 'nextFrame'
  | 'previousFrame'
  | 'fitFrame'
  | 'actualSize'
  | 'fitObject'
  | 'toggleOriginal'
  | 'hideClass'
  | 'help';

export const EDITOR_KEYS: Array<{ command: EditorCommand; keys: string[]; does: string; reviewer?: true }> = [
  {
    command: 'selectTool',
    keys: ['V'],
    does: 'select and edit: drag a shape, its corners, vertices or keypoints',
  },
  { command: 'boxTool', keys: ['B'], does: 'draw a box (drag)' },
  { command: 'polygonTool', keys: ['P'], does: 'draw a polygon (click the points, Enter closes it)' },
  { command: 'polylineTool', keys: ['L'], does: 'draw a polyline (click the points, Enter ends it)' },
  { command: 'keypointTool', keys: ['K'], does: 'place keypoints (click each, Enter ends)' },
  { command: 'finish', keys: ['Enter'], does: 'finish the shape being drawn, then choose its class' },
  { command: 'cancel', keys: ['Esc'], does: 'drop the shape being drawn, or the selection' },
  { command: 'next', keys: ['Tab'], does: 'select the next object' },
  { command: 'previous', keys: ['Shift+Tab'], does: 'select the previous object' },
  { command: 'relabel', keys: ['C'], does: 'change the class of the selected object (type to search)' },
  { command: 'accept', keys: ['A'], does: 'accept the selected object', reviewer: true },
  { command: 'reject', keys: ['R'], does: 'reject the selected object', reviewer: true },
  {
    command: 'remove',
    keys: ['Delete'],
    does: 'remove the chosen vertex or keypoint, the last point drawn, or (reviewer) the object',
  },
  { command: 'rotateLeft', keys: ['['], does: 'turn the selected box 5° anticlockwise (Shift: 1°)' },
  { command: 'rotateRight', keys: [']'], does: 'turn the selected box 5° clockwise (Shift: 1°)' },
  { command: 'nudgeLeft', keys: ['←', '→', '↑', '↓'], does: 'move the selected object 1 px (Shift: 10 px)' },
  { command: 'nextFrame', keys: ['F'], does: 'next frame of the session' },
  { command: 'previousFrame', keys: ['D'], does: 'previous frame of the session' },
  { command: 'fitFrame', keys: ['0'], does: 'show the whole frame' },
  { command: 'actualSize', keys: ['1'], does: 'one frame pixel per screen pixel' },
  { command: 'fitObject', keys: ['Z'], does: 'zoom to the selected object' },
  { command: 'toggleOriginal', keys: ['O'], does: 'show the original or the redacted image', reviewer: true },
  {
    command: 'hideClass',
    keys: ['H'],
    does: "hide the selected object's class (the Layers panel shows it again)",
  },
  { command: 'help', keys: ['?'], does: 'show or hide these keys' },
];

/** The command a key press means in the frame editor, or null. */
export function editorCommandOf(
  e: Pick<KeyboardEvent, 'key' | 'shiftKey' | 'ctrlKey' | 'metaKey' | 'altKey'>,
): EditorCommand | null {
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  const byKey: Record<string, EditorCommand> = {
    v: 'selectTool',
    b: 'boxTool',
    p: 'polygonTool',
    l: 'polylineTool',
    k: 'keypointTool',
    Enter: 'finish',
    Escape: 'cancel',
    c: 'relabel',
    a: 'accept',
    r: 'reject',
    Delete: 'remove',
    Backspace: 'remove',
    '[': 'rotateLeft',
    '{': 'rotateLeft',
    ']': 'rotateRight',
    '}': 'rotateRight',
    ArrowLeft: 'nudgeLeft',
    ArrowRight: 'nudgeRight',
    ArrowUp: 'nudgeUp',
    ArrowDown: 'nudgeDown',
    f: 'nextFrame',
    d: 'previousFrame',
    PageDown: 'nextFrame',
    PageUp: 'previousFrame',
    '0': 'fitFrame',
    '1': 'actualSize',
    z: 'fitObject',
    o: 'toggleOriginal',
    h: 'hideClass',
    '?': 'help',
  };
  if (key === 'Tab') return e.shiftKey ? 'previous' : 'next';
  return byKey[key] ?? null;
}
