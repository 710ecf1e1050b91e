import type { DriveRequest } from '../media/drive';

/** What IngestWorkflow is started with; the session and job rows exist before it starts. */
export interface IngestWorkflowInput {
  sessionId: string;
  jobId: string;
  drive: DriveRequest;
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
