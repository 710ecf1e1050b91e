/**
 * Marks typed by the analyst. On a terminal, stdin goes to raw mode: each configured key toggles
 * its label's interval (first press opens it, second closes it), `q` or Ctrl-C stops. Otherwise
 * (a pipe, a script), stdin is read by lines: `<label>` toggles, `<label> on` begins,
 * `<label> off` ends, `<label> point` places a point, `q` stops.
 */
import readline from 'node:readline';
import type { MarkAction } from '../workspace/types';

export type TypedLine = { label: string; action: MarkAction } | 'quit' | undefined;

const SUFFIX_ACTIONS: Record<string, MarkAction> = { on: 'begin', off: 'end', point: 'point' };

/** One typed line as a mark action; undefined for a blank line. */
export function parseMarkLine(line: string): TypedLine {
  const text = line.trim();
  if (text === '') return undefined;
  if (text === 'q') return 'quit';
  const m = /^(.*\S)\s+(on|off|point)$/.exec(text);
  if (m !== null) return { label: m[1]!, action: SUFFIX_ACTIONS[m[2]!]! };
  return { label: text, action: 'toggle' };
}

/** Parses `--keys a=brake,b=horn`: one printable character per label; `q` is reserved for stopping. */
export function parseKeyBindings(spec: string | undefined): Map<string, string> {
  const keys = new Map<string, string>();
  if (spec === undefined || spec.trim() === '') return keys;
  for (const part of spec.split(',')) {
    const m = /^(.)=(.+)$/u.exec(part.trim());
    if (m === null)
      throw new Error(`--keys entry '${part.trim()}' is not <key>=<label> (one character, then a label)`);
    const [, key, label] = m as unknown as [string, string, string];
    if (key === 'q') throw new Error("--keys cannot bind 'q': it stops the capture");
    if (key.charCodeAt(0) < 0x20) throw new Error(`--keys: key for '${label}' is a control character`);
    if (keys.has(key)) throw new Error(`--keys binds '${key}' twice`);
    keys.set(key, label.trim());
  }
  return keys;
}

export interface KeyboardHandlers {
  mark(label: string, action: MarkAction): void;
  quit(): void;
}

/**
 * Starts reading `input` for marks; returns a function that stops reading (and leaves raw mode).
 * `isTTY` decides the mode: raw keys on a terminal, lines otherwise.
 */
export function startKeyboard(
  input: NodeJS.ReadStream,
  keys: ReadonlyMap<string, string>,
  handlers: KeyboardHandlers,
): () => void {
  if (input.isTTY) {
    input.setRawMode(true);
    input.setEncoding('utf8');
    const onData = (chunk: string): void => {
      for (const ch of chunk) {
        if (ch === 'q' || ch === '\u0003') {
          handlers.quit();
          return;
        }
        const label = keys.get(ch);
        if (label !== undefined) handlers.mark(label, 'toggle');
      }
    };
    input.on('data', onData);
    input.resume();
    return () => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
    };
  }
  const lines = readline.createInterface({ input, terminal: false });
  lines.on('line', (line) => {
    const typed = parseMarkLine(line);
    if (typed === 'quit') handlers.quit();
    else if (typed !== undefined) handlers.mark(typed.label, typed.action);
  });
  return () => {
    lines.close();
    input.pause();
  };
}
