import { RefusedError } from '../errors';

/**
 * A drive that cannot be ingested as given: corrupt, truncated, empty, hostile, or not the kind it
 * was declared as. Retrying cannot help; the message is what the session and the job show.
 */
export class DriveRefusedError extends RefusedError {}
