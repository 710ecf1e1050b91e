/** `npm run bench` / `npx tsx bench/run.ts`: every canlab benchmark in turn. */
import { benchDecode, benchDecodeCsv } from './decode';
import { benchFormats } from './formats';
import { benchStartup } from './startup';

async function main(): Promise<void> {
  await benchFormats();
  await benchDecode();
  await benchDecodeCsv();
  benchStartup();
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
