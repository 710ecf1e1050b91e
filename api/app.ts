import { randomUUID } from 'node:crypto';
import express, { type Express } from 'express';
import { pinoHttp } from 'pino-http';
import { Histogram } from 'prom-client';
import { HTTP_DURATION_BUCKETS, HTTP_DURATION_METRIC } from '../core/hardening/slo';
import { createRouteGuards } from './auth/guards';
import type { AppDeps } from './deps';
import { buildOpenApi } from './http/openapi';
import { rejectHostileInput } from './http/hostile-input';
import { errorHandler, sendProblem } from './http/problem';
import type { DeclaredRoute, RouteGroup } from './http/route-group';
import { createAuthRoutes } from './routes/auth';
import { createEventStreamRoutes } from './routes/events';
import { createHealthRoutes } from './routes/health';
import { createIdentityRoutes } from './routes/identity';
import { createServiceAccountsRoutes } from './routes/service-accounts';
import { createInboxRoutes } from './routes/inbox';
import { createIntegrationsRoutes } from './routes/integrations';
import { createJobsRoutes } from './routes/jobs';
import { createUsersRoutes } from './routes/users';
import { createInspectorRoutes } from './routes/inspector';
import { createMetaSessionRoutes } from './routes/meta/sessions';
import { createFrameRoutes } from './routes/objects/frames';
import { createSessionHealthRoutes } from './routes/session-health';
import { createImportsRoutes } from './routes/imports';
import { createUploadRoutes } from './routes/upload';
import { createObjectsRoutes } from './routes/objects';
import { createObjectExplainRoutes } from './routes/objects/explain';
import { createReviewRoutes } from './routes/review';
import { createCheckpointRoutes } from './routes/checkpoints';
import { createTriageRoutes } from './routes/triage';
import { createOntologyRoutes } from './routes/meta/ontology';
import { createAssetsRoutes } from './routes/assets';
import { createAutolabelRoutes } from './routes/autolabel';
import { createCloudRoutes } from './routes/cloud';
import { createFusionRoutes } from './routes/fusion';
import { createFusionBoardRoutes } from './routes/fusion/board';
import { createFusionThresholdRoutes } from './routes/fusion/thresholds';
import { createGovernControlRoutes } from './routes/govern/control';
import { createGovernConsentRoutes } from './routes/govern/consent';
import { createGovernAuditRoutes } from './routes/govern/audit';
import { createGovernLineageRoutes } from './routes/govern/lineage';
import { createGovernErasureRoutes } from './routes/govern/erasure';
import { createGovernRetentionRoutes } from './routes/govern/retention';
import { createGovernKillSwitchRoutes } from './routes/govern/killswitch';
import { createGovernCostRoutes } from './routes/govern/cost';
import { createGovernDriftRoutes } from './routes/govern/drift';
import { createGovernControllerRoutes } from './routes/govern/controller';
import { createBillingRoutes } from './routes/billing';
import { createGovernRedactionRoutes } from './routes/govern/redaction';
import { createTrackRoutes } from './routes/tracks';
import { createTrackEventRoutes } from './routes/tracks/events';
import { createTrackInterpolationRoutes } from './routes/tracks/interpolate';
import { createTrackRelabelRoutes } from './routes/tracks/relabel';
import { createTrackEditRoutes } from './routes/tracks/edit';
import { createTrackSeg4dRoutes } from './routes/tracks/seg4d';
import { createInertialRoutes } from './routes/inertial';
import { createDrivingEventRoutes } from './routes/driving-events';
import { createDynamicsRoutes } from './routes/dynamics';
import { createLaneRoutes } from './routes/lanes';
import { createSessionLaneRoutes } from './routes/lanes/session';
import { createTrackletRoutes } from './routes/tracklets';
import { createObjectPropagateRoutes } from './routes/objects/propagate';
import { createAgentPropagateRoutes } from './routes/agent/propagate';
import { createHardeningRoutes } from './routes/hardening';
import { createRecallRoutes } from './routes/recall';
import { createRelabelRoutes } from './routes/relabel';
import { createAgentRunRoutes } from './routes/agent';
import { createAgentReanalyzeRoutes } from './routes/agent/reanalyze';
import { createCurationRoutes } from './routes/curation';
import { createActiveLearnRoutes } from './routes/activelearn';
import { createScenarioExportRoutes } from './routes/export/scenario';
import { createExportRoutes } from './routes/export';
import { createDatasetExportRoutes } from './routes/datasets/export';
import { createExportJobRoutes } from './routes/edge/exports';
import { createDatasetsRoutes } from './routes/datasets';
import { createDatasetTransferRoutes } from './routes/datasets/transfer';
import { createCertificateRoutes } from './routes/export/certificate';
import { createReleaseRoutes } from './routes/release';
import { createLineageRoutes } from './routes/campaigns/lineage';
import { createCampaignRoutes } from './routes/campaigns';
import { createDiscoveryRoutes } from './routes/discovery';
import { createFlywheelAdaptiveRoutes } from './routes/flywheel/adaptive';
import { createFlywheelLineageRoutes } from './routes/flywheel/lineage';
import { createFlywheelRunRoutes } from './routes/flywheel/runs';
import { createAgentFlywheelRoutes } from './routes/agent/flywheel';
import { createFlywheelGateDirectedRoutes } from './routes/flywheel/gate-directed';
import { createAgentFleetRoutes } from './routes/agent/fleet';
import { createPredictionRoutes } from './routes/predictions';
import { createQualityRoutes } from './routes/quality';
import { createExploreRoutes } from './routes/explore';
import { createEvalRoutes } from './routes/eval';
import { createErrordetectRoutes } from './routes/errordetect';
import { createEvalgovRoutes } from './routes/evalgov';
import { createPlatformQualityRoutes } from './routes/platform/quality';
import { createObjectQualityRoutes } from './routes/objects/quality';
import { createTrainingRoutes } from './routes/training';
import { createTrainingRegistryRoutes } from './routes/training/registry';
import { createExperimentsRoutes } from './routes/experiments';
import { createModelsRoutes } from './routes/models';
import { createGovernRegistryRoutes } from './routes/govern/registry';
import { createChampionSweepRoutes } from './routes/edge/champion-sweep';
import { createEdgeFleetRoutes } from './routes/edge/fleet';
import { createEdgeForgeRoutes } from './routes/edgeforge';
import { createRolloutRoutes } from './routes/edgeforge/rollout';
import { createCloudSessionRoutes } from './routes/cloud/sessions';
import { createDrivableRoutes } from './routes/drivable';
import { createOcrRoutes } from './routes/ocr';
import { createSignsRoutes } from './routes/signs';
import { createSegmentRoutes } from './routes/objects/segment';
import { createOddRoutes } from './routes/odd';
import { serveWebUi } from './http/web-ui';

/** Route groups served, one factory per group of spec/routes.tsv. */
export function createRouteGroups(deps: AppDeps): RouteGroup[] {
  // The SLO routes name the groups served, read once every group exists.
  const groups: RouteGroup[] = [
    createHealthRoutes(deps),
    createUsersRoutes(deps),
    createAuthRoutes(deps),
    createIdentityRoutes(deps),
    createServiceAccountsRoutes(deps),
    createInboxRoutes(deps),
    createIntegrationsRoutes(deps),
    createJobsRoutes(deps),
    createEventStreamRoutes(deps),
    createSessionHealthRoutes(deps),
    createInspectorRoutes(deps),
    createMetaSessionRoutes(deps),
    createFrameRoutes(deps),
    createUploadRoutes(deps),
    createImportsRoutes(deps),
    createObjectsRoutes(deps),
    createObjectExplainRoutes(deps),
    createReviewRoutes(deps),
    createCheckpointRoutes(deps),
    createTriageRoutes(deps),
    createOntologyRoutes(deps),
    createAssetsRoutes(deps),
    createAutolabelRoutes(deps),
    createCloudRoutes(deps),
    createFusionRoutes(deps),
    createFusionThresholdRoutes(deps),
    createFusionBoardRoutes(deps),
    createGovernControlRoutes(deps),
    createGovernConsentRoutes(deps),
    createGovernAuditRoutes(deps),
    createGovernLineageRoutes(deps),
    createGovernErasureRoutes(deps),
    createGovernRetentionRoutes(deps),
    createGovernKillSwitchRoutes(deps),
    createGovernCostRoutes(deps),
    createGovernDriftRoutes(deps),
    createGovernControllerRoutes(deps),
    createBillingRoutes(deps),
    createGovernRedactionRoutes(deps),
    createTrackRoutes(deps),
    createTrackEventRoutes(deps),
    createTrackInterpolationRoutes(deps),
    createTrackRelabelRoutes(deps),
    createTrackEditRoutes(deps),
    createTrackSeg4dRoutes(deps),
    createInertialRoutes(deps),
    createDrivingEventRoutes(deps),
    createDynamicsRoutes(deps),
    createLaneRoutes(deps),
    createSessionLaneRoutes(deps),
    createTrackletRoutes(deps),
    createObjectPropagateRoutes(deps),
    createAgentPropagateRoutes(deps),
    createHardeningRoutes(deps, () => groups.map((g) => g.name)),
    createAgentRunRoutes(deps),
    createAgentReanalyzeRoutes(deps),
    createRelabelRoutes(deps),
    createRecallRoutes(deps),
    createCurationRoutes(deps),
    createActiveLearnRoutes(deps),
    createExportRoutes(deps),
    createDatasetExportRoutes(deps),
    createExportJobRoutes(deps),
    createScenarioExportRoutes(deps),
    createLineageRoutes(deps),
    createCampaignRoutes(deps),
    createDiscoveryRoutes(deps),
    createFlywheelAdaptiveRoutes(deps),
    createFlywheelLineageRoutes(deps),
    createFlywheelRunRoutes(deps),
    createAgentFlywheelRoutes(deps),
    createFlywheelGateDirectedRoutes(deps),
    createAgentFleetRoutes(deps),
    createPredictionRoutes(deps),
    createQualityRoutes(deps),
    createExploreRoutes(deps),
    createEvalRoutes(deps),
    createErrordetectRoutes(deps),
    createEvalgovRoutes(deps),
    createPlatformQualityRoutes(deps),
    createObjectQualityRoutes(deps),
    createCertificateRoutes(deps),
    createReleaseRoutes(deps),
    createDatasetTransferRoutes(deps),
    createTrainingRegistryRoutes(deps),
    createTrainingRoutes(deps),
    createExperimentsRoutes(deps),
    createModelsRoutes(deps),
    createGovernRegistryRoutes(deps),
    createChampionSweepRoutes(deps),
    createEdgeFleetRoutes(deps),
    createEdgeForgeRoutes(deps),
    createRolloutRoutes(deps),
    createCloudSessionRoutes(deps),
    createDrivableRoutes(deps),
    createOcrRoutes(deps),
    createSignsRoutes(deps),
    createSegmentRoutes(deps),
    createOddRoutes(deps),
    // After every group with a literal /api/datasets/<word> GET (blob): its /api/datasets/{commit_id} would take it.
    createDatasetsRoutes(deps),
  ];
  return groups;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface PlatformApp {
  app: Express;
  routes: DeclaredRoute[];
}

export function createApp(deps: AppDeps): PlatformApp {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');

  app.use(
    pinoHttp({
      logger: deps.logger,
      // A caller's X-Request-Id is kept when it is sane, so a request can be followed across services.
      genReqId: (req, res) => {
        const given = req.headers['x-request-id'];
        const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
        res.setHeader('X-Request-Id', id);
        return id;
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : 'info'),
      serializers: {
        req: (req: { id: unknown; method: string; url: string }) => ({
          id: req.id,
          method: req.method,
          url: req.url.split('?')[0],
        }),
        // The OIDC callback's redirect carries the sign-in token in its fragment (docs/oidc.md).
        res: (res: { statusCode: number; headers: Record<string, unknown> }) => ({
          statusCode: res.statusCode,
          headers: {
            ...res.headers,
            location: String(res.headers.location ?? '').split('#')[0] || undefined,
          },
        }),
      },
    }),
  );

  const duration = new Histogram({
    name: HTTP_DURATION_METRIC,
    help: 'API request duration by route template, route group and status',
    labelNames: ['method', 'route', 'route_group', 'status'],
    buckets: [...HTTP_DURATION_BUCKETS],
    registers: [deps.metrics],
  });
  app.use((req, res, next) => {
    const end = duration.startTimer();
    res.on('finish', () => {
      const route = (req.route as { path?: string } | undefined)?.path;
      end({
        method: req.method,
        route: route ? `${req.baseUrl}${route}` : 'unmatched',
        route_group: (res.locals.routeGroup as string | undefined) ?? 'none',
        status: String(res.statusCode),
      });
    });
    next();
  });

  app.use(express.json({ limit: deps.config.http.jsonLimit }));

  const guards = createRouteGuards(deps);
  const groups = createRouteGroups(deps);
  const routes = groups.flatMap((g) => g.routes);
  // NUL bytes, over-deep JSON, non-JSON bodies and undeclared methods: refused before any route.
  app.use(rejectHostileInput(routes, guards));
  const openapi = buildOpenApi(routes, { title: 'drivelab platform API', version: '0.1.0' });
  app.get('/api/openapi.json', async (req, res, next) => {
    try {
      // The API description is behind a token like every route but health and readiness.
      await guards.authenticate(req, { allowQueryToken: false });
      res.json(openapi);
    } catch (err) {
      next(err);
    }
  });
  for (const group of groups) app.use(group.toRouter(guards));

  // Fail closed: an unknown /api path answers 401 to a caller without a valid token, 404 otherwise.
  app.use('/api', async (req, res, next) => {
    try {
      await guards.authenticate(req, { allowQueryToken: false });
      sendProblem(res, {
        status: 404,
        type: 'urn:drivelab:problem:no-route',
        detail: `no route ${req.method} ${req.originalUrl.split('?')[0]}`,
      });
    } catch (err) {
      next(err);
    }
  });
  app.use(serveWebUi({ dir: deps.config.http.webDir, devLogin: deps.config.env === 'local' }));
  app.use((req, res) => sendProblem(res, { status: 404, detail: `no route ${req.method} ${req.path}` }));
  app.use(errorHandler(deps.logger));
  return { app, routes };
}
