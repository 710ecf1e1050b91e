/**
 * Reading and checking JSON request bodies and query values. Every failure is an HttpError naming
 * the field, so a client learns exactly what to fix (400 `{error: 'bad_request', field, message}`).
 */
import { dlcToLength, lengthToDlc, type CanFrame } from '../frame';
import type { SignalDefinition } from '../workspace/types';
import { newSignal } from '../workspace/workspace';

/** An answer other than 200 with a JSON body `{error, message, field?}`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export function badField(field: string, message: string): HttpError {
  return new HttpError(400, 'bad_request', `${field}: ${message}`, field);
}

export type JsonObject = Record<string, unknown>;

/** Parses a request body as a JSON object; an empty body counts as `{}`. */
export function parseJsonObject(text: string): JsonObject {
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new HttpError(
      400,
      'bad_json',
      `the body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`,
      'body',
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new HttpError(400, 'bad_json', 'the body must be a JSON object', 'body');
  return value as JsonObject;
}

/**
 * A query string as a JSON object for the body validators: the parameters named in `numbers` become
 * numbers and those in `booleans` true/false when they read as such (otherwise they stay strings, and
 * the validator names them); the rest stay strings, so a hex id such as `217` is never read as decimal.
 */
export function queryFields(
  url: URL,
  kinds: { numbers?: readonly string[]; booleans?: readonly string[] },
): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of url.searchParams) {
    if (kinds.numbers?.includes(key) && value.trim() !== '' && Number.isFinite(Number(value)))
      out[key] = Number(value);
    else if (kinds.booleans?.includes(key) && (value === 'true' || value === 'false'))
      out[key] = value === 'true';
    else out[key] = value;
  }
  return out;
}

export function stringField(body: JsonObject, field: string): string;
export function stringField(body: JsonObject, field: string, fallback: string): string;
export function stringField(body: JsonObject, field: string, fallback?: string): string {
  const v = body[field];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== 'string' || v.trim() === '')
    throw badField(field, v === undefined ? 'is required' : 'must be a non-empty string');
  return v;
}

export function booleanField(body: JsonObject, field: string, fallback: boolean): boolean {
  const v = body[field];
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw badField(field, 'must be true or false');
  return v;
}

export function numberField(body: JsonObject, field: string, fallback?: number): number {
  const v = body[field];
  if (v === undefined && fallback !== undefined) return fallback;
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw badField(field, v === undefined ? 'is required' : 'must be a finite number');
  return v;
}

export function integerField(
  body: JsonObject,
  field: string,
  min: number,
  max: number,
  fallback?: number,
): number {
  const v = numberField(body, field, fallback);
  if (!Number.isInteger(v) || v < min || v > max)
    throw badField(field, `must be a whole number in ${min}..${max}`);
  return v;
}

export function oneOf<T extends string>(
  body: JsonObject,
  field: string,
  allowed: readonly T[],
  fallback: T,
): T {
  const v = body[field];
  if (v === undefined) return fallback;
  if (typeof v !== 'string' || !(allowed as readonly string[]).includes(v))
    throw badField(field, `must be one of ${allowed.join(', ')}`);
  return v as T;
}

/** A CAN id as a hex string (`0x1A3`, `1A3`) or a number; up to 29 bits. */
export function canIdField(body: JsonObject, field: string): number {
  const v = body[field];
  let id: number;
  if (typeof v === 'number') id = v;
  else if (typeof v === 'string' && /^(0x)?[0-9a-f]{1,8}$/i.test(v.trim()))
    id = parseInt(v.trim().replace(/^0x/i, ''), 16);
  else throw badField(field, v === undefined ? 'is required' : 'must be a hex string such as "0x1A3"');
  if (!Number.isInteger(id) || id < 0 || id > 0x1fffffff)
    throw badField(field, 'must be a CAN id in 0x0..0x1FFFFFFF');
  return id;
}

/** Payload bytes as hex pairs, spaces optional: `DE AD BE EF` or `deadbeef`. */
export function hexBytesField(body: JsonObject, field: string): Uint8Array {
  const v = body[field];
  if (typeof v !== 'string')
    throw badField(
      field,
      v === undefined ? 'is required' : 'must be a hex byte string such as "DE AD BE EF"',
    );
  const hex = v.replace(/\s+/g, '');
  if (!/^([0-9a-f]{2})*$/i.test(hex))
    throw badField(field, 'must be pairs of hex digits such as "DE AD BE EF"');
  return Uint8Array.from(hex.match(/../g) ?? [], (pair) => parseInt(pair, 16));
}

/**
 * The frame of a POST /inject body `{id, data, extended?, channel?, fd?}`. `extended` defaults to
 * true for ids over 0x7FF; classic frames carry up to 8 bytes, CAN FD ones (fd: true) a length CAN
 * FD has (0-8, 12, 16, 20, 24, 32, 48, 64).
 */
export function frameFromBody(body: JsonObject): CanFrame {
  const id = canIdField(body, 'id');
  const extended = booleanField(body, 'extended', id > 0x7ff);
  if (!extended && id > 0x7ff)
    throw badField('id', 'a standard id is at most 0x7FF (set extended: true for a 29-bit id)');
  const fd = booleanField(body, 'fd', false);
  const data = hexBytesField(body, 'data');
  let dlc: number;
  try {
    dlc = lengthToDlc(data.length, fd);
  } catch (err) {
    throw badField('data', err instanceof Error ? err.message : String(err));
  }
  if (dlcToLength(dlc, fd) !== data.length)
    throw badField(
      'data',
      `${data.length} bytes is not a CAN FD frame length (0-8, 12, 16, 20, 24, 32, 48, 64)`,
    );
  const channel = integerField(body, 'channel', 0, 255, 0);
  return {
    timestamp: Date.now() / 1000,
    id,
    extended,
    remote: false,
    error: false,
    fd,
    brs: false,
    esi: false,
    dlc,
    data,
    channel,
    direction: 'tx',
  };
}

/** `DE AD BE EF`: the spec's shape of frame data. */
export function hexBytes(data: Uint8Array): string {
  let out = '';
  for (let i = 0; i < data.length; i++)
    out += (i ? ' ' : '') + data[i]!.toString(16).toUpperCase().padStart(2, '0');
  return out;
}

/**
 * A signal definition from the window's signal builder: `{messageId, extended?, name, startBit,
 * length, byteOrder?, signed?, factor?, offset?, minimum?, maximum?, unit?}`. The workspace checks
 * what the fields mean together (fits the payload, a DBC name...) and answers CanlabInputError.
 */
export function definitionFromBody(body: JsonObject): SignalDefinition {
  const messageId = canIdField(body, 'messageId');
  const extended = booleanField(body, 'extended', messageId > 0x7ff);
  if (body.unit !== undefined && typeof body.unit !== 'string') throw badField('unit', 'must be a string');
  const signal = newSignal({
    name: stringField(body, 'name').trim(),
    startBit: integerField(body, 'startBit', 0, 511),
    length: integerField(body, 'length', 1, 64),
    byteOrder: oneOf(body, 'byteOrder', ['little_endian', 'big_endian'] as const, 'little_endian'),
    signed: booleanField(body, 'signed', false),
    factor: numberField(body, 'factor', 1),
    offset: numberField(body, 'offset', 0),
    minimum: numberField(body, 'minimum', 0),
    maximum: numberField(body, 'maximum', 0),
    unit: typeof body.unit === 'string' ? body.unit : '',
  });
  return { messageId, extended, signal };
}
