import type { Request } from 'express';
import type { Actor } from '../../activities/annotations/objects';
import type { Principal } from '../auth/principal';

/** Who did it, for the audit trail of a write: the caller and the request that carried it. */
export const actorOf = (principal: Principal, req: Request): Actor => ({
  userId: principal.userId,
  role: principal.role,
  requestId: String(req.id),
});
