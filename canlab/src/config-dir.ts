import os from 'node:os';
import path from 'node:path';

/**
 * canlab's configuration directory: $CANLAB_CONFIG_DIR, else $XDG_CONFIG_HOME/canlab, else
 * ~/.config/canlab. Saved adapters, plugin approvals, the AI engine settings and the capture
 * kit's default token live here.
 */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const explicit = env['CANLAB_CONFIG_DIR'];
  if (explicit !== undefined && explicit !== '') return explicit;
  const xdg = env['XDG_CONFIG_HOME'];
  if (xdg !== undefined && xdg !== '') return path.join(xdg, 'canlab');
  return path.join(os.homedir(), '.config', 'canlab');
}
