/** DBC signal database: model, parser, writer, codec and attribute helpers. */
export type * from './model';
export { parseDbc, loadDbc, decodeDbcBytes, DBC_KEYWORDS } from './parse';
export { writeDbc, formatNumber, DEFAULT_NEW_SYMBOLS } from './write';
export {
  compileDecoder,
  decodeMessage,
  encodeMessage,
  extractRaw,
  extractRawBigInt,
  insertRaw,
  extractSignalRaw,
  insertSignalRaw,
  physicalToRaw,
  rawToPhysical,
  muxConditions,
  messageKey,
  signalEndByte,
  type CompiledDecoder,
  type DecodedMessage,
  type DecodedSignal,
  type MuxCondition,
  type RawSpec,
} from './codec';
export { enumValues, isFdMessage, messageAttribute } from './attributes';
