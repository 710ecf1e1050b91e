/**
 * Helpers over DBC attributes: ENUM value lists, effective values (set or default), and the
 * CAN FD frame format of a message (`VFrameFormat`).
 */
import type { AttributeDefinition, AttributeValue, DbcDatabase, DbcMessage } from './model';

/** The labels of an `ENUM "a","b",...` definition, or undefined for other types. */
export function enumValues(def: AttributeDefinition): string[] | undefined {
  if (!/^ENUM\b/.test(def.definition)) return undefined;
  const values: string[] = [];
  const re = /"((?:\\["\\]|[^"\\]|\\(?!["\\]))*)"/g;
  for (let m = re.exec(def.definition); m; m = re.exec(def.definition)) {
    values.push(m[1]!.replace(/\\(["\\])/g, '$1'));
  }
  return values;
}

/**
 * A message attribute's value as the file means it: the message's own value or the definition's
 * default; ENUM indices are resolved to their label.
 */
export function messageAttribute(
  db: DbcDatabase,
  message: DbcMessage,
  name: string,
): AttributeValue | undefined {
  const def = db.attributeDefinitions.find(
    (d) => d.name === name && (d.objectType === 'BO_' || d.objectType === ''),
  );
  const value = message.attributes[name] ?? def?.defaultValue;
  if (value === undefined || def === undefined) return value;
  const labels = enumValues(def);
  if (labels && typeof value === 'number') return labels[value] ?? value;
  return value;
}

/**
 * True for a CAN FD message: `VFrameFormat` is StandardCAN_FD / ExtendedCAN_FD (index 14 / 15 in
 * Vector's list), or the message is longer than 8 bytes.
 */
export function isFdMessage(db: DbcDatabase, message: DbcMessage): boolean {
  if (message.length > 8) return true;
  const format = messageAttribute(db, message, 'VFrameFormat');
  return typeof format === 'string' && /_FD$/i.test(format);
}
