import type { ParseArgsConfig } from 'node:util';

/** What `parseArgs` gave a command: positionals are allowed. */
export interface CliArgs {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

/** Returns the process exit code. Throws CanlabInputError for bad input or usage. */
export type CliRun = (args: CliArgs, io: CliIo) => Promise<number>;

/** A `canlab <name>` subcommand. Parsed with node:util `parseArgs` using `options`. */
export interface CliCommand {
  name: string;
  /** One line shown by `canlab --help`, e.g. `ids <capture>`. */
  usage: string;
  summary: string;
  options: NonNullable<ParseArgsConfig['options']>;
  run: CliRun;
}

/** Where a command writes; tests pass buffers, the binary passes process streams. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}
