/**
 * The keyboard review's bindings, chosen once (docs/web.md): CVAT's and Label Studio's habits
 * where they exist (Tab / Shift+Tab between objects, D / F between frames, Ctrl+Z / Ctrl+Shift+Z),
 * one letter per decision otherwise. `?` shows this table.
 */
export type ReviewCommand =
  | 'accept'
  | 'reject'
  | 'relabel'
  | 'next'
  | 'previous'
  | 'nextFrame'
  | 'previousFrame'
  | 'undo'
  | 'redo'
  | 'fitObject'
  | 'fitFrame'
  | 'openEditor'
  | 'help';

export const REVIEW_KEYS: Array<{ command: ReviewCommand; keys: string[]; does: string }> = [
  { command: 'accept', keys: ['A', 'Enter'], does: 'accept the object and go to the next' },
  { command: 'reject', keys: ['R', 'Delete'], does: 'reject the object and go to the next' },
  { command: 'relabel', keys: ['C'], does: 'relabel: type a class, ↑/↓, Enter (Esc leaves)' },
  { command: 'next', keys: ['Tab', '→'], does: 'next object' },
  { command: 'previous', keys: ['Shift+Tab', '←'], does: 'previous object' },
  { command: 'nextFrame', keys: ['F'], does: 'first object of the next frame' },
  { command: 'previousFrame', keys: ['D'], does: 'first object of the previous frame' },
  { command: 'undo', keys: ['Ctrl+Z'], does: 'undo the last decision' },
  { command: 'redo', keys: ['Ctrl+Shift+Z', 'Ctrl+Y'], does: 'redo' },
  { command: 'fitObject', keys: ['Z'], does: 'zoom back to the object' },
  { command: 'fitFrame', keys: ['0'], does: 'show the whole frame' },
  { command: 'openEditor', keys: ['E'], does: 'open the frame in the editor, on this object' },
  { command: 'help', keys: ['?'], does: 'show or hide these keys' },
];

/** The command a key press means in the keyboard review, or null. */
export function commandOf(
  e: Pick<KeyboardEvent, 'key' | 'shiftKey' | 'ctrlKey' | 'metaKey' | 'altKey'>,
): ReviewCommand | null {
  const mod = e.ctrlKey || e.metaKey;
  const key = e.key.length === 1 ? e.key.toLowerCase() : e.key;
  if (e.altKey) return null;
  if (mod) {
    if (key === 'z') return e.shiftKey ? 'redo' : 'undo';
    if (key === 'y') return 'redo';
    return null;
  }
  switch (key) {
    case 'a':
    case 'Enter':
      return 'accept';
    case 'r':
    case 'Delete':
      return 'reject';
    case 'c':
      return 'relabel';
    case 'Tab':
      return e.shiftKey ? 'previous' : 'next';
    case 'ArrowRight':
      return 'next';
    case 'ArrowLeft':
      return 'previous';
    case 'f':
      return 'nextFrame';
    case 'd':
      return 'previousFrame';
    case 'z':
      return 'fitObject';
    case '0':
      return 'fitFrame';
    case 'e':
      return 'openEditor';
    case '?':
      return 'help';
    default:
      return null;
  }
}
