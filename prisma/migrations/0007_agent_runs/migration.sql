-- AlterTable
ALTER TABLE "agent_runs" ADD COLUMN     "error" TEXT,
ADD COLUMN     "finished_at" TIMESTAMPTZ(6),
ADD COLUMN     "params" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
ADD COLUMN     "workflow_id" TEXT;

-- AlterTable
ALTER TABLE "autolabel_jobs" ADD COLUMN     "agent_run_id" UUID;

-- CreateTable
CREATE TABLE "agent_run_frames" (
    "run_id" UUID NOT NULL,
    "frame_id" UUID NOT NULL,
    "job_id" UUID NOT NULL,
    "created" UUID[],
    "replaced" JSONB NOT NULL DEFAULT '[]',
    "reverted_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "agent_run_frames_pkey" PRIMARY KEY ("run_id","frame_id")
);

-- CreateTable
CREATE TABLE "agent_run_sessions" (
    "run_id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "job_id" UUID,
    "outcome" TEXT NOT NULL,
    "reason" TEXT,
    "finished_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "agent_run_sessions_pkey" PRIMARY KEY ("run_id","session_id")
);

-- CreateIndex
CREATE INDEX "agent_runs_kind_created_at_idx" ON "agent_runs"("kind", "created_at");

-- CreateIndex
CREATE INDEX "autolabel_jobs_agent_run_id_idx" ON "autolabel_jobs"("agent_run_id");

-- AddForeignKey
ALTER TABLE "agent_run_frames" ADD CONSTRAINT "agent_run_frames_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "agent_runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_run_frames" ADD CONSTRAINT "agent_run_frames_frame_id_fkey" FOREIGN KEY ("frame_id") REFERENCES "frames"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_run_sessions" ADD CONSTRAINT "agent_run_sessions_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "agent_runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;
