/**
 * Bad input (a malformed capture line, a truncated BLF container, an unknown DBC keyword...).
 * `where` locates it for a human: `file:line` for text formats, `file@offset` for binary ones.
 * The CLI prints `canlab: <where>: <message>` and exits 1, never a stack trace.
 */
export class CanlabInputError extends Error {
  constructor(
    readonly where: string,
    message: string,
  ) {
    super(message);
    this.name = 'CanlabInputError';
  }

  override toString(): string {
    return `${this.where}: ${this.message}`;
  }
}
