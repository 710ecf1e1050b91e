/**
 * Every workflow the `cpu` worker runs is exported here; the worker bundles this file.
 * Workflow files import activities by type only and use no Node built-ins (lint enforces both).
 */
export { inferenceCheckWorkflow } from './inference-check';
export { healthSweepWorkflow, sessionHealthWorkflow } from './session-health';
export { ingestWorkflow } from './ingest';
export { autoLabelWorkflow } from './autolabel';
export { uploadHashWorkflow } from './upload';
export { controlSeedWorkflow } from './control-seed';
export { redetectCorpusWorkflow } from './redetect-corpus';
export { revertAgentRunWorkflow } from './revert-agent-run';
export { exportWorkflow } from './export';
export { curationEmbedWorkflow } from './curation-embed';
export { inferenceRunWorkflow } from './inference-run';
export { errorDetectWorkflow } from './errordetect';
export { objectQualityBackfillWorkflow } from './object-quality-backfill';
export { exploreProjectionWorkflow } from './explore-projection';
export * from './training';
export * from './promotion';
export * from './edgeforge';
export * from './edge-rollout';
export * from './training-sweep';
export * from './cloud';
export * from './drivable-backfill';
export * from './job-cancel';
export * from './webhooks';
export * from './erase-session';
export * from './pii-recheck';
export * from './retention-sweep';
export * from './retrack';
export * from './relabel';
export * from './recall';
export * from './campaign';
export * from './discovery';
export * from './flywheel';
