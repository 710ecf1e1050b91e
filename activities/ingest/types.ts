import type { DriveRequest } from '../media/drive';

/** What IngestWorkflow is started with; the session and job rows exist before it starts. */
export interface IngestWorkflowInput {
  sessionId: string;
  jobId: string;
  drive: DriveRequest;
  /**
   * Set when the drive is an object of a registered source (docs/ingest.md): the first step
   * copies it to `drive.source` (the session's folder of source copies in the uploads bucket) and
   * the ingest reads that copy. Only the ids: the source's credentials never enter the history.
   */
  sourceObject?: { sourceId: string; key: string };
}

export interface IngestStepInput {
  sessionId: string;
  jobId: string;
}

export interface IngestResult {
  sessionId: string;
  frames: number;
  duplicates: number;
  rejected: number;
  redacted: number;
  health: { passed: boolean; score: number };
}
