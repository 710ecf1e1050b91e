import type { Db } from '../db';

/**
 * The GPU slot's holder, as the slot-holding activity writes it: one row per device, taken when
 * the activity starts, touched with every committed batch (commitFrames), removed when it ends.
 * A worker that died leaves its row until Temporal's heartbeat timeout hands the session to
 * another attempt, which takes the row over; readers see such a row as stale once its heartbeat
 * is older than the timeout.
 */
export interface SlotHolder {
  device: number;
  holderKind: 'autolabel' | 'inference' | 'training' | 'relabel' | 'recall';
  holderId: string;
  workflowId: string;
  sessionId: string | null;
}

export async function takeSlot(db: Db, h: SlotHolder): Promise<void> {
  const now = new Date();
  await db.$transaction([
    // A retry on another GPU moves the work: the dead worker's row for it goes.
    db.gpuSlot.deleteMany({ where: { holderId: h.holderId, device: { not: h.device } } }),
    db.gpuSlot.upsert({
      where: { device: h.device },
      create: { ...h, acquiredAt: now, heartbeatAt: now },
      update: { ...h, acquiredAt: now, heartbeatAt: now },
    }),
  ]);
}

export async function releaseSlot(db: Db, device: number, holderId: string): Promise<void> {
  await db.gpuSlot.deleteMany({ where: { device, holderId } });
}
