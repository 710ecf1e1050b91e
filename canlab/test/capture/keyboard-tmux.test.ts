/**
 * The keyboard on a real terminal: tmux runs `canlab capture` in a pseudo-terminal, keys are
 * typed with send-keys, and the screen is read with capture-pane.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CANLAB_BIN } from '../adapters/process';
import { requireBinary } from '../binaries';

jest.setTimeout(90000);

const TMUX = requireBinary('/usr/bin/tmux', 'tmux');

it('a configured key opens then closes an interval, q stops', async () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'canlab-tmux-'));
  const socket = path.join(tmp, 'tmux.sock');
  const out = path.join(tmp, 'rec');
  const tmux = (...args: string[]): string =>
    execFileSync(TMUX, ['-S', socket, ...args], { encoding: 'utf8' });
  const screen = (): string => tmux('capture-pane', '-p', '-t', 'cap');
  const waitForScreen = async (pattern: RegExp): Promise<void> => {
    for (let i = 0; i < 300; i++) {
      if (pattern.test(screen())) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`screen never showed ${pattern}:\n${screen()}`);
  };
  const command = [
    `CANLAB_VIRTUAL_BUS_DIR=${path.join(tmp, 'bus')}`,
    `CANLAB_CONFIG_DIR=${path.join(tmp, 'config')}`,
    process.execPath,
    CANLAB_BIN,
    'capture --interface virtual --channel tmuxbus --keys a=brake,h=horn',
    `--out ${out}`,
    `; echo "exit=$?"; sleep 30`,
  ].join(' ');
  try {
    tmux('new-session', '-d', '-s', 'cap', '-x', '160', '-y', '40', command);
    await waitForScreen(/keys: a=brake, h=horn; q stops/);
    tmux('send-keys', '-t', 'cap', 'a');
    await waitForScreen(/mark: brake begins \[keyboard\]/);
    await new Promise((r) => setTimeout(r, 300));
    tmux('send-keys', '-t', 'cap', 'a');
    await waitForScreen(/mark: brake ends \(\d+\.\d+ s\) \[keyboard\]/);
    tmux('send-keys', '-t', 'cap', 'q');
    await waitForScreen(/exit=0/);
    const shown = screen();
    expect(shown).toMatch(/stopped \(q\): 0 frames in 0 segments, 1 mark/);
    expect(shown).toContain(`project: ${out}/capture.canlab.json`);
    const marks = JSON.parse(readFileSync(path.join(out, 'marks.json'), 'utf8')).marks;
    expect(marks).toHaveLength(1);
    expect(marks[0]).toMatchObject({ label: 'brake', kind: 'interval', source: 'keyboard' });
    expect(marks[0].end - marks[0].start).toBeGreaterThanOrEqual(0.25);
  } finally {
    try {
      tmux('kill-server');
    } catch {
      // already gone
    }
    rmSync(tmp, { recursive: true, force: true });
  }
});
