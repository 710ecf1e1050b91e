-- CreateTable
CREATE TABLE "flywheel_runs" (
    "id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "session_id" UUID,
    "params" JSONB NOT NULL DEFAULT '{}',
    "status" TEXT NOT NULL DEFAULT 'running',
    "stage" TEXT NOT NULL,
    "stages" JSONB NOT NULL DEFAULT '[]',
    "outputs" JSONB NOT NULL DEFAULT '{}',
    "error" TEXT,
    "workflow_id" TEXT NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "flywheel_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "gate_directed_runs" (
    "id" UUID NOT NULL,
    "promotion_id" UUID NOT NULL,
    "challenger_version" TEXT NOT NULL,
    "champion_version" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'open',
    "targets" JSONB NOT NULL,
    "cycle_id" UUID,
    "materialized_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "materialized_at" TIMESTAMPTZ(6),

    CONSTRAINT "gate_directed_runs_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "flywheel_runs_created_at_idx" ON "flywheel_runs"("created_at");

-- CreateIndex
CREATE INDEX "flywheel_runs_session_id_created_at_idx" ON "flywheel_runs"("session_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "gate_directed_runs_promotion_id_key" ON "gate_directed_runs"("promotion_id");

-- CreateIndex
CREATE INDEX "gate_directed_runs_state_created_at_idx" ON "gate_directed_runs"("state", "created_at");
