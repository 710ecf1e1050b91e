-- CreateTable
CREATE TABLE "error_runs" (
    "id" UUID NOT NULL,
    "scope" JSONB NOT NULL,
    "run_id" UUID,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "options" JSONB NOT NULL DEFAULT '{}',
    "summary" JSONB NOT NULL DEFAULT '{}',
    "workflow_id" TEXT,
    "error" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "error_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "error_candidates" (
    "id" UUID NOT NULL,
    "error_run_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "frame_id" UUID NOT NULL,
    "object_ids" UUID[] DEFAULT ARRAY[]::UUID[],
    "prediction_id" UUID,
    "score" DOUBLE PRECISION NOT NULL,
    "proposed" JSONB NOT NULL,
    "evidence" JSONB NOT NULL DEFAULT '{}',
    "state" TEXT NOT NULL DEFAULT 'open',
    "reviewer" TEXT,
    "reviewer_id" UUID,
    "note" TEXT,
    "applied" JSONB,
    "verdict_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "error_candidates_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "calibrations" (
    "id" UUID NOT NULL,
    "method" TEXT NOT NULL,
    "source" JSONB NOT NULL,
    "n_samples" INTEGER NOT NULL,
    "fit" JSONB NOT NULL,
    "report" JSONB NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT false,
    "activated_at" TIMESTAMPTZ(6),
    "activated_by" UUID,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "calibrations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "explore_eval_members" (
    "id" UUID NOT NULL,
    "eval_id" UUID NOT NULL,
    "true_class_id" INTEGER NOT NULL,
    "pred_class_id" INTEGER NOT NULL,
    "frame_id" UUID NOT NULL,
    "object_id" UUID,
    "prediction_id" UUID,
    "bbox" DOUBLE PRECISION[],
    "iou" DOUBLE PRECISION,
    "conf" DOUBLE PRECISION,

    CONSTRAINT "explore_eval_members_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "explore_projections" (
    "id" UUID NOT NULL,
    "method" TEXT NOT NULL,
    "params" JSONB NOT NULL,
    "n_points" INTEGER NOT NULL DEFAULT 0,
    "status" TEXT NOT NULL DEFAULT 'running',
    "error" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "explore_projections_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "explore_projection_points" (
    "projection_id" UUID NOT NULL,
    "frame_id" UUID NOT NULL,
    "x" DOUBLE PRECISION NOT NULL,
    "y" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "explore_projection_points_pkey" PRIMARY KEY ("projection_id","frame_id")
);

-- CreateTable
CREATE TABLE "explore_tags" (
    "id" UUID NOT NULL,
    "tag" TEXT NOT NULL,
    "target_kind" TEXT NOT NULL,
    "target_id" UUID NOT NULL,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "explore_tags_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "explore_views" (
    "slice_id" UUID NOT NULL,
    "state" JSONB NOT NULL DEFAULT '{}',
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "explore_views_pkey" PRIMARY KEY ("slice_id")
);

-- CreateTable
CREATE TABLE "blind_audits" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "seed" INTEGER NOT NULL,
    "spec" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'open',
    "result" JSONB,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "blind_audits_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "blind_audit_items" (
    "audit_id" UUID NOT NULL,
    "object_id" UUID NOT NULL,
    "frame_id" UUID NOT NULL,
    "class_id" INTEGER NOT NULL,
    "hidden" JSONB NOT NULL,
    "verdict" TEXT,
    "labeled_by" UUID,
    "labeled_at" TIMESTAMPTZ(6),

    CONSTRAINT "blind_audit_items_pkey" PRIMARY KEY ("audit_id","object_id")
);

-- CreateIndex
CREATE INDEX "error_runs_created_at_idx" ON "error_runs"("created_at");

-- CreateIndex
CREATE INDEX "error_candidates_error_run_id_score_idx" ON "error_candidates"("error_run_id", "score");

-- CreateIndex
CREATE INDEX "error_candidates_state_kind_idx" ON "error_candidates"("state", "kind");

-- CreateIndex
CREATE INDEX "error_candidates_frame_id_idx" ON "error_candidates"("frame_id");

-- CreateIndex
CREATE INDEX "calibrations_created_at_idx" ON "calibrations"("created_at");

-- CreateIndex
CREATE INDEX "explore_eval_members_eval_id_true_class_id_pred_class_id_idx" ON "explore_eval_members"("eval_id", "true_class_id", "pred_class_id");

-- CreateIndex
CREATE INDEX "explore_projections_created_at_idx" ON "explore_projections"("created_at");

-- CreateIndex
CREATE INDEX "explore_tags_target_kind_target_id_idx" ON "explore_tags"("target_kind", "target_id");

-- CreateIndex
CREATE UNIQUE INDEX "explore_tags_tag_target_kind_target_id_key" ON "explore_tags"("tag", "target_kind", "target_id");

-- CreateIndex
CREATE INDEX "blind_audits_created_at_idx" ON "blind_audits"("created_at");

-- AddForeignKey
ALTER TABLE "error_candidates" ADD CONSTRAINT "error_candidates_error_run_id_fkey" FOREIGN KEY ("error_run_id") REFERENCES "error_runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "explore_projection_points" ADD CONSTRAINT "explore_projection_points_projection_id_fkey" FOREIGN KEY ("projection_id") REFERENCES "explore_projections"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "blind_audit_items" ADD CONSTRAINT "blind_audit_items_audit_id_fkey" FOREIGN KEY ("audit_id") REFERENCES "blind_audits"("id") ON DELETE CASCADE ON UPDATE CASCADE;
