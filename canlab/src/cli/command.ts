import type { ParseArgsConfig } from 'node:util';

/** A `canlab <name>` subcommand. Parsed with node:util `parseArgs` using `options`; positionals are allowed. */
export interface CliCommand {
  name: string;
  /** One line shown by `canlab --help`, e.g. `ids <capture>`. */
  usage: string;
  summary: string;
  options: NonNullable<ParseArgsConfig['options']>;
  /** Returns the process exit code. Throws CanlabInputError for bad input or usage. */
  run(
    args: { positionals: string[]; values: Record<string, string | boolean | undefined> },
    io: CliIo,
  ): Promise<number>;
}

/** Where a command writes; tests pass buffers, the binary passes process streams. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}
