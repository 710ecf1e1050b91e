import fs from 'node:fs';

/**
 * `file`, or an error naming it and its Debian package. `./platform test` installs what the canlab
 * tests run (infra/stack.sh), so a missing binary is a broken setup that must fail, not skip.
 */
export function requireBinary(file: string, debianPackage: string): string {
  if (!fs.existsSync(file))
    throw new Error(
      `${file} is missing: install it with apt-get install ${debianPackage} (infra/stack.sh up does)`,
    );
  return file;
}
