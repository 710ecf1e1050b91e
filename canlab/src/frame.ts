/**
 * One CAN or CAN FD frame as every reader yields and every writer takes. Readers keep the file's
 * time base (absolute or relative) and number channels from 0 in every format, so a write→read
 * round trip and a conversion between formats are lossless.
 */
export interface CanFrame {
  /** Seconds, as the source gives them (absolute epoch seconds, or relative to the capture start). */
  timestamp: number;
  /** Arbitration id: 11 bits when `extended` is false, 29 bits when true. */
  id: number;
  extended: boolean;
  /** Remote transmission request: carries a DLC but no data bytes. */
  remote: boolean;
  /** Error frame: id and data are whatever the source recorded (often zero). */
  error: boolean;
  /** CAN FD frame (FDF); `brs` (bit-rate switch) and `esi` (error state) only mean something when true. */
  fd: boolean;
  brs: boolean;
  esi: boolean;
  /** The DLC field as sent on the wire: 0–15. For classic CAN 9–15 still mean 8 data bytes. */
  dlc: number;
  /** Payload bytes; empty for remote frames. Length must equal dlcToLength(dlc, fd) except for remote frames. */
  data: Uint8Array;
  /** 0-based bus channel (python-can's convention): ASC/BLF/TRC store channel+1 on disk. */
  channel: number;
  /** Direction when the source records one. */
  direction?: 'rx' | 'tx';
}

const FD_LENGTHS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64];

/** Number of data bytes a DLC code stands for. */
export function dlcToLength(dlc: number, fd: boolean): number {
  if (!Number.isInteger(dlc) || dlc < 0 || dlc > 15) throw new RangeError(`DLC ${dlc} is outside 0..15`);
  return fd ? FD_LENGTHS[dlc]! : Math.min(dlc, 8);
}

/** Smallest DLC code whose length holds `length` bytes. */
export function lengthToDlc(length: number, fd: boolean): number {
  if (!fd) {
    if (length > 8) throw new RangeError(`a classic CAN frame carries at most 8 bytes, not ${length}`);
    return length;
  }
  const dlc = FD_LENGTHS.findIndex((l) => l >= length);
  if (dlc < 0) throw new RangeError(`a CAN FD frame carries at most 64 bytes, not ${length}`);
  return dlc;
}
