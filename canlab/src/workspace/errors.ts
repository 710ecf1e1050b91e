/**
 * Refusals a Workspace answers with. They are distinct classes so that each surface can map them
 * to its own answer (the REST API to a documented status, the MCP server to a tool error) without
 * parsing messages. Bad input (an invalid signal definition, a capture over the frame cap) is a
 * CanlabInputError from ../errors instead.
 */

/** Why a frame was not sent. */
export type TransmitRefusal = 'arm_tx_off' | 'no_transmitter';

/** `inject` refused: ARM TX is off, or no adapter that can transmit is attached. Nothing was sent. */
export class TransmitRefusedError extends Error {
  constructor(
    readonly reason: TransmitRefusal,
    message: string,
  ) {
    super(message);
    this.name = 'TransmitRefusedError';
  }
}

/** Why a mark action was refused by the interval state machine. */
export type MarkRefusal = 'already_open' | 'none_open';

/** `begin` on a label with an open interval, or `end` on a label without one. No mark changed. */
export class MarkRefusedError extends Error {
  constructor(
    readonly reason: MarkRefusal,
    readonly label: string,
    message: string,
  ) {
    super(message);
    this.name = 'MarkRefusedError';
  }
}
