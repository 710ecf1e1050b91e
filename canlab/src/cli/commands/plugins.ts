/** `canlab plugins list [--dir <d>] | approve <file> | revoke <file>`: metadata is read statically; nothing here runs plugin code. */
import { approvePlugin, listPlugins, pluginsDir, revokePlugin, type PluginInfo } from '../../plugins/plugins';
import { approvalsFile } from '../../plugins/trust';
import { CanlabInputError } from '../../errors';
import type { CliRun } from '../command';

function line(p: PluginInfo): string {
  const problems = p.problems.length > 0 ? ` [invalid: ${p.problems.join('; ')}]` : '';
  return `${p.state}\t${p.name || '?'}\t${p.version || '?'}\t${p.sha256.slice(0, 16)}\t${p.file}${problems}`;
}

export const run: CliRun = async ({ positionals, values }, io) => {
  const [action, file, ...extra] = positionals;
  if (extra.length > 0) throw new CanlabInputError('plugins', `unexpected argument '${extra[0]}'`);
  if (action === 'list') {
    const dir = typeof values['dir'] === 'string' ? values['dir'] : pluginsDir();
    const list = await listPlugins(dir);
    io.stdout(
      `${dir}: ${list.length} plugin${list.length === 1 ? '' : 's'} (approvals in ${approvalsFile()})\n`,
    );
    if (list.length > 0)
      io.stdout(['state\tname\tversion\tsha256\tfile', ...list.map(line)].join('\n') + '\n');
    return 0;
  }
  if ((action === 'approve' || action === 'revoke') && file !== undefined) {
    if (action === 'approve') {
      const p = await approvePlugin(file);
      io.stdout(
        `approved ${p.name} ${p.version} (sha256 ${p.sha256}): ${p.file} will run with full privileges; editing it withdraws the approval\n`,
      );
    } else {
      io.stdout((await revokePlugin(file)) ? `revoked ${file}\n` : `${file} was not approved\n`);
    }
    return 0;
  }
  throw new CanlabInputError('plugins', 'expects list, approve <file> or revoke <file>');
};
