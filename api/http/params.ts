import { z } from 'zod';
import { InputError } from '../../core/errors';

const uuid = z.uuid();

/** A path parameter that must be a UUID; anything else is a 422 naming `path.<name>`. */
export function uuidParam(params: Record<string, string>, name: string): string {
  const parsed = uuid.safeParse(params[name]);
  if (!parsed.success)
    throw new InputError(`${name} must be a UUID`, [{ field: `path.${name}`, message: 'must be a UUID' }]);
  return parsed.data;
}
