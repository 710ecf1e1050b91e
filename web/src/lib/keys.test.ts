import { describe, expect, it } from '@jest/globals';
import { commandOf, REVIEW_KEYS } from './keys';

const press = (key: string, mods: { shift?: boolean; ctrl?: boolean; meta?: boolean; alt?: boolean } = {}) =>
  commandOf({ key, shiftKey: !!mods.shift, ctrlKey: !!mods.ctrl, metaKey: !!mods.meta, altKey: !!mods.alt });

describe('keyboard review bindings', () => {
  it('maps every documented key to its command', () => {
    expect(press('a')).toBe('accept');
    expect(press('A', { shift: true })).toBe('accept');
    expect(press('Enter')).toBe('accept');
    expect(press('r')).toBe('reject');
    expect(press('Delete')).toBe('reject');
    expect(press('c')).toBe('relabel');
    expect(press('Tab')).toBe('next');
    expect(press('Tab', { shift: true })).toBe('previous');
    expect(press('ArrowRight')).toBe('next');
    expect(press('ArrowLeft')).toBe('previous');
    expect(press('f')).toBe('nextFrame');
    expect(press('d')).toBe('previousFrame');
    expect(press('z', { ctrl: true })).toBe('undo');
    expect(press('Z', { ctrl: true, shift: true })).toBe('redo');
    expect(press('y', { ctrl: true })).toBe('redo');
    expect(press('z', { meta: true })).toBe('undo');
    expect(press('z')).toBe('fitObject');
    expect(press('0')).toBe('fitFrame');
    expect(press('e')).toBe('openEditor');
    expect(press('?', { shift: true })).toBe('help');
  });

  it('leaves other keys, Alt chords and browser shortcuts alone', () => {
    expect(press('q')).toBeNull();
    expect(press('a', { alt: true })).toBeNull();
    expect(press('c', { ctrl: true })).toBeNull();
    expect(press('r', { ctrl: true })).toBeNull();
  });

  it('documents each command once', () => {
    const commands = REVIEW_KEYS.map((k) => k.command);
    expect(new Set(commands).size).toBe(commands.length);
  });
});
