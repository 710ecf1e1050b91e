import { describe, expect, it } from '@jest/globals';
import { EDITOR_KEYS, editorCommandOf } from './editor-keys';

const press = (key: string, mods: { shift?: boolean; ctrl?: boolean; alt?: boolean } = {}) =>
  editorCommandOf({ key, shiftKey: !!mods.shift, ctrlKey: !!mods.ctrl, metaKey: false, altKey: !!mods.alt });

/** The key a help-table label stands for, as KeyboardEvent.key says it. */
const KEY_OF: Record<string, string> = {
  Esc: 'Escape',
  '←': 'ArrowLeft',
  '→': 'ArrowRight',
  '↑': 'ArrowUp',
  '↓': 'ArrowDown',
};

describe('frame editor bindings', () => {
  it('means what the help table says for every key it lists', () => {
    for (const { command, keys } of EDITOR_KEYS)
      for (const label of keys) {
        const shift = label.startsWith('Shift+');
        const key = KEY_OF[label] ?? (label.length === 1 ? label.toLowerCase() : label.replace('Shift+', ''));
        const got = press(key, { shift });
        if (command === 'nudgeLeft') expect(got).toMatch(/^nudge/);
        else expect({ label, got }).toEqual({ label, got: command });
      }
  });

  it('moves by arrows in their own direction, and Shift turns by a finer step through the same command', () => {
    expect(press('ArrowUp')).toBe('nudgeUp');
    expect(press('ArrowDown', { shift: true })).toBe('nudgeDown');
    expect(press('{', { shift: true })).toBe('rotateLeft');
    expect(press('}', { shift: true })).toBe('rotateRight');
    expect(press('Backspace')).toBe('remove');
  });

  it('leaves browser shortcuts and Alt chords alone', () => {
    expect(press('z', { ctrl: true })).toBeNull();
    expect(press('b', { alt: true })).toBeNull();
    expect(press('q')).toBeNull();
  });

  it('documents each command once', () => {
    const commands = EDITOR_KEYS.map((k) => k.command);
    expect(new Set(commands).size).toBe(commands.length);
  });
});
