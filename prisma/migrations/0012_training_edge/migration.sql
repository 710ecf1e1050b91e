-- AlterTable
ALTER TABLE "models" ADD COLUMN     "dataset_commit_id" TEXT,
ADD COLUMN     "format" TEXT,
ADD COLUMN     "metrics" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "parent_version" TEXT,
ADD COLUMN     "promoted_at" TIMESTAMPTZ(6),
ADD COLUMN     "retired_at" TIMESTAMPTZ(6),
ADD COLUMN     "sha256" TEXT,
ADD COLUMN     "size_bytes" INTEGER,
ADD COLUMN     "state" TEXT NOT NULL DEFAULT 'candidate',
ADD COLUMN     "training_config" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "training_job_id" UUID;

-- CreateTable
CREATE TABLE "training_jobs" (
    "id" UUID NOT NULL,
    "name" TEXT,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "task" TEXT NOT NULL DEFAULT 'detection',
    "trainer" TEXT NOT NULL,
    "compute_target" TEXT NOT NULL DEFAULT 'local',
    "dataset_commit_id" TEXT NOT NULL,
    "parent_version" TEXT NOT NULL,
    "config" JSONB NOT NULL DEFAULT '{}',
    "sweep_name" TEXT,
    "workflow_id" TEXT NOT NULL,
    "model_version" TEXT,
    "metrics" JSONB NOT NULL DEFAULT '{}',
    "progress" JSONB NOT NULL DEFAULT '{}',
    "checkpoint" JSONB,
    "error" TEXT,
    "created_by" UUID,
    "started_at" TIMESTAMPTZ(6),
    "finished_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "training_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "training_curve_points" (
    "id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "epoch" INTEGER NOT NULL,
    "step" INTEGER NOT NULL DEFAULT 0,
    "train_loss" DOUBLE PRECISION NOT NULL,
    "val_loss" DOUBLE PRECISION,
    "metrics" JSONB NOT NULL DEFAULT '{}',
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "training_curve_points_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "training_sweeps" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "grid" JSONB NOT NULL,
    "base" JSONB NOT NULL,
    "metric" TEXT NOT NULL DEFAULT 'map50',
    "status" TEXT NOT NULL DEFAULT 'running',
    "workflow_id" TEXT NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "training_sweeps_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "experiments" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "experiments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "experiment_runs" (
    "id" UUID NOT NULL,
    "experiment_id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "baseline_run_id" TEXT,
    "label" TEXT,
    "notes" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "experiment_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "promotions" (
    "id" UUID NOT NULL,
    "task" TEXT NOT NULL DEFAULT 'detection',
    "challenger_version" TEXT NOT NULL,
    "champion_version" TEXT,
    "outcome" TEXT NOT NULL,
    "rule" TEXT,
    "reasons" JSONB NOT NULL DEFAULT '[]',
    "report" JSONB NOT NULL DEFAULT '{}',
    "gold_id" UUID,
    "reverts_id" UUID,
    "reverted_at" TIMESTAMPTZ(6),
    "actor_id" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "promotions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "edge_artifacts" (
    "id" UUID NOT NULL,
    "model_version" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "precision" TEXT NOT NULL,
    "optimization" TEXT NOT NULL DEFAULT 'none',
    "key" TEXT NOT NULL,
    "sha256" TEXT NOT NULL,
    "size_bytes" INTEGER NOT NULL,
    "accuracy" JSONB NOT NULL DEFAULT '{}',
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "edge_artifacts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "edge_benchmarks" (
    "id" UUID NOT NULL,
    "artifact_id" UUID,
    "model_version" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "latency_ms" JSONB NOT NULL,
    "throughput_fps" DOUBLE PRECISION,
    "power_w" DOUBLE PRECISION,
    "memory_mb" DOUBLE PRECISION,
    "environment" JSONB NOT NULL DEFAULT '{}',
    "artifact_uri" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "edge_benchmarks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "edge_forge_runs" (
    "id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "model_version" TEXT,
    "artifact_id" UUID,
    "target" TEXT NOT NULL,
    "params" JSONB NOT NULL DEFAULT '{}',
    "result" JSONB NOT NULL DEFAULT '{}',
    "passed" BOOLEAN,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "edge_forge_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "edge_devices" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "labels" JSONB NOT NULL DEFAULT '{}',
    "assigned_artifact_id" UUID,
    "running_artifact_id" UUID,
    "running_sha256" TEXT,
    "status" TEXT NOT NULL DEFAULT 'registered',
    "last_seen_at" TIMESTAMPTZ(6),
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "edge_devices_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "edge_telemetry" (
    "id" UUID NOT NULL,
    "device_id" UUID NOT NULL,
    "artifact_id" UUID,
    "rollout_id" UUID,
    "model_sha256" TEXT,
    "frames" INTEGER NOT NULL DEFAULT 0,
    "errors" INTEGER NOT NULL DEFAULT 0,
    "latency_ms" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL DEFAULT 'ok',
    "detail" JSONB NOT NULL DEFAULT '{}',
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "edge_telemetry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "edge_rollouts" (
    "id" UUID NOT NULL,
    "artifact_id" UUID NOT NULL,
    "previous" JSONB NOT NULL DEFAULT '{}',
    "target" TEXT NOT NULL,
    "stages" JSONB NOT NULL,
    "gate" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "stage" INTEGER NOT NULL DEFAULT 0,
    "history" JSONB NOT NULL DEFAULT '[]',
    "reason" TEXT,
    "workflow_id" TEXT NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "edge_rollouts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "cloud_sessions" (
    "id" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "hourly_usd" DOUBLE PRECISION NOT NULL,
    "instance_id" TEXT,
    "detail" JSONB NOT NULL DEFAULT '{}',
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ended_at" TIMESTAMPTZ(6),

    CONSTRAINT "cloud_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "training_jobs_status_created_at_idx" ON "training_jobs"("status", "created_at");

-- CreateIndex
CREATE INDEX "training_jobs_sweep_name_idx" ON "training_jobs"("sweep_name");

-- CreateIndex
CREATE UNIQUE INDEX "training_curve_points_job_id_epoch_key" ON "training_curve_points"("job_id", "epoch");

-- CreateIndex
CREATE UNIQUE INDEX "training_sweeps_name_key" ON "training_sweeps"("name");

-- CreateIndex
CREATE UNIQUE INDEX "experiments_name_key" ON "experiments"("name");

-- CreateIndex
CREATE UNIQUE INDEX "experiment_runs_experiment_id_job_id_key" ON "experiment_runs"("experiment_id", "job_id");

-- CreateIndex
CREATE INDEX "promotions_challenger_version_idx" ON "promotions"("challenger_version");

-- CreateIndex
CREATE INDEX "promotions_created_at_idx" ON "promotions"("created_at");

-- CreateIndex
CREATE INDEX "edge_artifacts_model_version_target_idx" ON "edge_artifacts"("model_version", "target");

-- CreateIndex
CREATE INDEX "edge_benchmarks_model_version_target_idx" ON "edge_benchmarks"("model_version", "target");

-- CreateIndex
CREATE INDEX "edge_forge_runs_kind_created_at_idx" ON "edge_forge_runs"("kind", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "edge_devices_name_key" ON "edge_devices"("name");

-- CreateIndex
CREATE INDEX "edge_devices_assigned_artifact_id_idx" ON "edge_devices"("assigned_artifact_id");

-- CreateIndex
CREATE INDEX "edge_telemetry_artifact_id_at_idx" ON "edge_telemetry"("artifact_id", "at");

-- CreateIndex
CREATE INDEX "edge_telemetry_device_id_at_idx" ON "edge_telemetry"("device_id", "at");

-- CreateIndex
CREATE INDEX "edge_rollouts_artifact_id_idx" ON "edge_rollouts"("artifact_id");

-- CreateIndex
CREATE INDEX "cloud_sessions_status_idx" ON "cloud_sessions"("status");

-- CreateIndex
CREATE INDEX "models_task_state_idx" ON "models"("task", "state");

-- AddForeignKey
ALTER TABLE "training_curve_points" ADD CONSTRAINT "training_curve_points_job_id_fkey" FOREIGN KEY ("job_id") REFERENCES "training_jobs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "experiment_runs" ADD CONSTRAINT "experiment_runs_experiment_id_fkey" FOREIGN KEY ("experiment_id") REFERENCES "experiments"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "edge_telemetry" ADD CONSTRAINT "edge_telemetry_device_id_fkey" FOREIGN KEY ("device_id") REFERENCES "edge_devices"("id") ON DELETE CASCADE ON UPDATE CASCADE;
