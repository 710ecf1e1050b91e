-- CreateTable
CREATE TABLE "campaigns" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "class_name" TEXT NOT NULL,
    "class_id" INTEGER NOT NULL,
    "task_type" TEXT NOT NULL DEFAULT 'detection',
    "target_metric" TEXT NOT NULL DEFAULT 'recall',
    "target_value" DOUBLE PRECISION NOT NULL DEFAULT 0.6,
    "label_budget" INTEGER NOT NULL DEFAULT 2000,
    "max_iterations" INTEGER NOT NULL DEFAULT 6,
    "patience" INTEGER NOT NULL DEFAULT 2,
    "require_approval" BOOLEAN NOT NULL DEFAULT true,
    "autopilot_stages" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "notes" TEXT,
    "gold_id" UUID NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "stage" TEXT NOT NULL DEFAULT 'select',
    "iteration" INTEGER NOT NULL DEFAULT 1,
    "labels_used" INTEGER NOT NULL DEFAULT 0,
    "best_value" DOUBLE PRECISION,
    "stale_iterations" INTEGER NOT NULL DEFAULT 0,
    "batch_id" UUID,
    "stop_reason" TEXT,
    "error" TEXT,
    "iterations" JSONB NOT NULL DEFAULT '[]',
    "workflow_id" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "campaigns_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "campaigns_status_created_at_idx" ON "campaigns"("status", "created_at");
