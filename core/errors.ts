/**
 * Domain errors. They know nothing of HTTP: the API's one error middleware maps each to a status
 * (docs/api.md lists the mapping), workers map them to non-retryable ApplicationFailures.
 */
export class DomainError extends Error {
  constructor(
    message: string,
    /** Extra machine-readable detail (e.g. the blocking sessions of a privacy-gate refusal). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A field of the request is malformed or missing. */
export class InputError extends DomainError {
  constructor(
    message: string,
    readonly fieldErrors: Array<{ field: string; message: string }> = [],
    details?: Record<string, unknown>,
  ) {
    super(message, details);
  }
}

/**
 * The request is malformed in a way the spec answers with 400 rather than 422 (e.g. an object
 * `state` outside the allowed list, spec Errors).
 */
export class BadRequestError extends InputError {}

/** The request is understood but a rule refuses it (quarantined session, privacy gate...). */
export class RefusedError extends DomainError {}

export class NotFoundError extends DomainError {}

/** The state changed under the caller (version mismatch, duplicate start...). */
export class ConflictError extends DomainError {}

export class NotAuthenticatedError extends DomainError {}

export class NotAllowedError extends DomainError {}

export class TooManyRequestsError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** A dependency (database, Temporal, object store, a model) is absent or not answering. */
export class UnavailableError extends DomainError {}

/** The process cannot serve yet: a dependency it needs does not answer (readiness). */
export class NotReadyError extends UnavailableError {}
