/**
 * `canlab` command line: `canlab <command> [args]`. Exit codes: 0 success, 1 bad input
 * (CanlabInputError, printed as `canlab: <where>: <message>`), 2 usage errors, 70 unexpected
 * internal errors (one line, no stack trace).
 */
import { parseArgs } from 'node:util';
import { CanlabInputError } from '../errors';
import type { CliArgs, CliCommand, CliIo } from './command';
import { commands } from './commands';

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

export function helpText(list: readonly CliCommand[] = commands): string {
  const width = Math.max(...list.map((c) => c.usage.length), 10);
  const lines = ['usage: canlab <command> [options]', '', 'commands:'];
  for (const c of list) lines.push(`  ${c.usage.padEnd(width)}  ${c.summary}`);
  lines.push('', 'canlab <command> --help shows one command.');
  return lines.join('\n') + '\n';
}

function commandHelp(c: CliCommand): string {
  const opts = Object.entries(c.options).map(
    ([name, o]) => `  --${name}${o.type === 'string' ? ' <value>' : ''}`,
  );
  return `usage: canlab ${c.usage}\n${c.summary}\n${opts.length > 0 ? `options:\n${opts.join('\n')}\n` : ''}`;
}

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    io.stderr(helpText());
    return 2;
  }
  if (name === '--help' || name === '-h' || name === 'help') {
    io.stdout(helpText());
    return 0;
  }
  const command = commands.find((c) => c.name === name);
  if (command === undefined) {
    io.stderr(`canlab: unknown command '${oneLine(name)}' (see canlab --help)\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout(commandHelp(command));
    return 0;
  }
  let parsed: CliArgs;
  try {
    const { positionals, values } = parseArgs({
      args: rest,
      options: command.options,
      allowPositionals: true,
      strict: true,
    });
    parsed = { positionals, values: values as CliArgs['values'] };
  } catch (err) {
    io.stderr(
      `canlab: ${command.name}: ${oneLine(err instanceof Error ? err.message : String(err))} (usage: canlab ${command.usage})\n`,
    );
    return 2;
  }
  try {
    return await command.run(parsed, io);
  } catch (err) {
    if (err instanceof CanlabInputError) {
      io.stderr(`canlab: ${oneLine(err.where)}: ${oneLine(err.message)}\n`);
      return 1;
    }
    const message = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    io.stderr(`canlab: internal error: ${oneLine(message)}\n`);
    return 70;
  }
}
