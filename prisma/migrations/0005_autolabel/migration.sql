-- Auto-label jobs, the GPU slot's holder, and what a control sample keeps (docs/autolabel.md).
-- AlterTable
ALTER TABLE "control_samples" ADD COLUMN     "class_name" TEXT,
ADD COLUMN     "conf" DOUBLE PRECISION,
ADD COLUMN     "checks" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "job_id" UUID,
ADD COLUMN     "note" TEXT;

-- CreateTable
CREATE TABLE "autolabel_jobs" (
    "id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "workflow_id" TEXT NOT NULL,
    "mode" TEXT NOT NULL DEFAULT 'autolabel',
    "compute_target" TEXT NOT NULL DEFAULT 'local',
    "only_unlabelled" BOOLEAN NOT NULL DEFAULT false,
    "limit" INTEGER,
    "policy" JSONB NOT NULL DEFAULT '{}',
    "state" TEXT NOT NULL DEFAULT 'queued',
    "frames_planned" INTEGER,
    "frames_done" INTEGER NOT NULL DEFAULT 0,
    "last_frame_index" INTEGER,
    "objects_created" INTEGER NOT NULL DEFAULT 0,
    "objects_deleted" INTEGER NOT NULL DEFAULT 0,
    "tally" JSONB NOT NULL DEFAULT '{}',
    "paths" JSONB NOT NULL DEFAULT '{}',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "resumed_from" INTEGER,
    "error" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(6),
    "finished_at" TIMESTAMPTZ(6),
    "updated_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "autolabel_jobs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "gpu_slot" (
    "device" INTEGER NOT NULL,
    "holder_kind" TEXT NOT NULL,
    "holder_id" TEXT NOT NULL,
    "workflow_id" TEXT NOT NULL,
    "session_id" UUID,
    "acquired_at" TIMESTAMPTZ(6) NOT NULL,
    "heartbeat_at" TIMESTAMPTZ(6) NOT NULL,

    CONSTRAINT "gpu_slot_pkey" PRIMARY KEY ("device")
);

-- CreateIndex
CREATE INDEX "control_samples_verdict_created_at_idx" ON "control_samples"("verdict", "created_at");

-- CreateIndex
CREATE INDEX "autolabel_jobs_session_id_created_at_idx" ON "autolabel_jobs"("session_id", "created_at");

-- CreateIndex
CREATE INDEX "autolabel_jobs_state_created_at_idx" ON "autolabel_jobs"("state", "created_at");
