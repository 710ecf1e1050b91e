import type { CliCommand } from '../command';
import { convert } from './convert';
import { decode } from './decode';
import { detect } from './detect';
import { ids } from './ids';

/** Every `canlab` subcommand, in the order `canlab --help` lists them. Append new commands here. */
export const commands: CliCommand[] = [convert, decode, ids, detect];
