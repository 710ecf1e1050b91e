import { createAgentRunActivities } from './agent-runs/runs';
import { createRedetectCorpusActivities } from './agent-runs/redetect-corpus';
import { createRevertActivities } from './agent-runs/revert';
import { createAutolabelActivities } from './autolabel';
import { createAutolabelJobActivities } from './autolabel/jobs';
import { createDetectActivities } from './detect';
import { createExportActivities } from './export';
import { createControlSeedActivities } from './govern/control-seed';
import { createCurationEmbedActivities } from './curation/embed';
import { createIngestActivities } from './ingest';
import { createInspectorActivities } from './inspector';
import { createInferenceRunActivities, createInferenceRunBookkeeping } from './quality/inference-runs';
import { createObjectQualityActivities } from './quality/object-quality';
import { createUploadActivities } from './upload';
import { createErrorDetectActivities } from './errordetect';
import { createExploreActivities } from './explore';
import { createTrainingActivities, createTrainingGpuActivities } from './training';
import { createRegistryActivities } from './registry';
import { createEdgeForgeActivities } from './edgeforge';
import { createEdgeRolloutActivities } from './edge';
import { createCloudActivities } from './cloud';
import { createDrivableActivities } from './drivable/backfill';
import { createJobActivities } from './jobs/cancel';
import { createWebhookActivities } from './webhooks';
import { createErasureActivities } from './govern/erasure';
import { createRetentionActivities } from './govern/retention';
import { createPiiRecheckCpuActivities, createPiiRecheckGpuActivities } from './pii-recheck';
import { createTrackActivities } from './tracks/retrack';
import { createRelabelCpuActivities, createRelabelGpuActivities } from './relabel';
import { createRecallCpuActivities, createRecallGpuActivities } from './recall';
import { createCampaignActivities } from './campaigns';
import { createFlywheelActivities } from './flywheel/runs';
import { createDiscoveryActivities } from './discovery';
import type { ActivityDeps } from './deps';

/** Activities of the `cpu` task queue (I/O and CPU work); later concerns add theirs here. */
export function createCpuActivities(deps: ActivityDeps) {
  return {
    ...createIngestActivities(deps),
    ...createInspectorActivities(deps),
    ...createAutolabelJobActivities(deps),
    ...createUploadActivities(deps),
    ...createControlSeedActivities(deps),
    ...createAgentRunActivities(deps),
    ...createRedetectCorpusActivities(deps),
    ...createRevertActivities(deps),
    ...createCurationEmbedActivities(deps),
    ...createExportActivities(deps),
    ...createInferenceRunBookkeeping(deps),
    ...createErrorDetectActivities(deps),
    ...createExploreActivities(deps),
    ...createObjectQualityActivities(deps),
    ...createTrainingActivities(deps),
    ...createRegistryActivities(deps),
    ...createEdgeForgeActivities(deps),
    ...createEdgeRolloutActivities(deps),
    ...createCloudActivities(deps),
    ...createJobActivities(deps),
    ...createWebhookActivities(deps),
    ...createErasureActivities(deps),
    ...createRetentionActivities(deps),
    ...createPiiRecheckCpuActivities(deps),
    ...createTrackActivities(deps),
    ...createRelabelCpuActivities(deps),
    ...createRecallCpuActivities(deps),
    ...createCampaignActivities(deps),
    ...createFlywheelActivities(deps),
    ...createDiscoveryActivities(deps),
  };
}

/** Activities of the `gpu` task queue (one slot): model inference, training, corpus relabel. */
export function createGpuActivities(deps: ActivityDeps) {
  return {
    ...createDetectActivities(deps),
    ...createAutolabelActivities(deps),
    ...createInferenceRunActivities(deps),
    ...createTrainingGpuActivities(deps),
    ...createDrivableActivities(deps),
    ...createPiiRecheckGpuActivities(deps),
    ...createRelabelGpuActivities(deps),
    ...createRecallGpuActivities(deps),
  };
}

export type CpuActivities = ReturnType<typeof createCpuActivities>;
export type GpuActivities = ReturnType<typeof createGpuActivities>;
