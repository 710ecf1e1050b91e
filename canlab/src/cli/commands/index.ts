import type { CliCommand } from '../command';
import { adapters } from './adapters';
import { ai } from './ai';
import { capture } from './capture';
import { convert } from './convert';
import { decode } from './decode';
import { detect } from './detect';
import { ids } from './ids';
import { plugins } from './plugins';
import { window } from './window';

/** Every `canlab` subcommand, in the order `canlab --help` lists them. Append new commands here. */
export const commands: CliCommand[] = [convert, decode, ids, detect, capture, adapters, plugins, ai, window];
