import { InputError } from '../errors';
import { isKnownValue, ODD_ATTRIBUTES, UNKNOWN, type OddAttribute } from './attributes';

/**
 * A clique: a combination of attribute values (`lighting=dark|weather=rain`), written with its
 * attributes in ODD_ATTRIBUTES order so that one combination has exactly one name.
 */

export type Clique = Array<{ attribute: OddAttribute; value: string }>;

/** Cliques combine 2 or 3 attributes in the coverage routes; the bandit also takes single values. */
export const CLIQUE_SIZES = [2, 3] as const;
export const MAX_CLIQUE_PARTS = 3;

/** A value may not hold the separators; recorded context values are compared as text. */
export const CLIQUE_VALUE = /^[^|=\s][^|=]{0,63}$/;

const order = (attribute: OddAttribute) => ODD_ATTRIBUTES.indexOf(attribute);

export function cliqueName(clique: Clique): string {
  return [...clique]
    .sort((a, b) => order(a.attribute) - order(b.attribute))
    .map((p) => `${p.attribute}=${p.value}`)
    .join('|');
}

/** Parses and canonicalises a clique name; `field` names it in the 422 when it does not parse. */
export function parseClique(name: string, field: string): Clique {
  const fail = (message: string): never => {
    throw new InputError(`${field}: ${message}`, [{ field, message }]);
  };
  const parts = name.split('|');
  if (parts.length > MAX_CLIQUE_PARTS) fail(`at most ${MAX_CLIQUE_PARTS} attribute=value parts`);
  const seen = new Set<string>();
  const clique = parts.map((part) => {
    const at = part.indexOf('=');
    const attribute = part.slice(0, at) as OddAttribute;
    const value = part.slice(at + 1);
    if (at < 0 || !ODD_ATTRIBUTES.includes(attribute))
      fail(
        `${JSON.stringify(part)} is not attribute=value with an attribute of ${ODD_ATTRIBUTES.join(', ')}`,
      );
    if (!CLIQUE_VALUE.test(value))
      fail(`${JSON.stringify(value)} is not a value (1–64 characters, no | or =)`);
    if (!isKnownValue(attribute, value)) fail(`${JSON.stringify(value)} is not a ${attribute} value`);
    if (seen.has(attribute)) fail(`${attribute} appears twice`);
    seen.add(attribute);
    return { attribute, value };
  });
  return [...clique].sort((a, b) => order(a.attribute) - order(b.attribute));
}

export const hasUnknown = (clique: Clique): boolean => clique.some((p) => p.value === UNKNOWN);

/** Every combination of `size` attributes out of `attributes`, each in ODD_ATTRIBUTES order. */
export function attributeCombinations(attributes: readonly OddAttribute[], size: number): OddAttribute[][] {
  const sorted = [...new Set(attributes)].sort((a, b) => order(a) - order(b));
  const out: OddAttribute[][] = [];
  const walk = (start: number, picked: OddAttribute[]) => {
    if (picked.length === size) {
      out.push(picked);
      return;
    }
    for (let i = start; i < sorted.length; i++) walk(i + 1, [...picked, sorted[i]!]);
  };
  walk(0, []);
  return out;
}
