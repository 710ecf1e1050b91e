-- AlterTable
ALTER TABLE "gold_sets" ADD COLUMN     "content_hash" TEXT,
ADD COLUMN     "frame_ids" UUID[] DEFAULT ARRAY[]::UUID[],
ADD COLUMN     "note" TEXT,
ADD COLUMN     "session_ids" UUID[] DEFAULT ARRAY[]::UUID[];

-- AlterTable
ALTER TABLE "inference_runs" ADD COLUMN     "created_by" UUID,
ADD COLUMN     "error" TEXT,
ADD COLUMN     "finished_at" TIMESTAMPTZ(6),
ADD COLUMN     "frames_done" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "frames_planned" INTEGER,
ADD COLUMN     "n_predictions" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "origin" TEXT NOT NULL DEFAULT 'gpu',
ADD COLUMN     "scope" JSONB NOT NULL DEFAULT '{}',
ADD COLUMN     "started_at" TIMESTAMPTZ(6),
ADD COLUMN     "workflow_id" TEXT;

-- CreateTable
CREATE TABLE "gold_items" (
    "gold_id" UUID NOT NULL,
    "object_id" UUID NOT NULL,
    "frame_id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "class_id" INTEGER NOT NULL,
    "bbox" DOUBLE PRECISION[],
    "rot_deg" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "polygons" JSONB,
    "polyline" JSONB,
    "origin" TEXT NOT NULL,
    "proposed" JSONB,

    CONSTRAINT "gold_items_pkey" PRIMARY KEY ("gold_id","object_id")
);

-- CreateTable
CREATE TABLE "models" (
    "id" UUID NOT NULL,
    "model_version" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "task" TEXT NOT NULL DEFAULT 'detection',
    "class_ids" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "artifact_uri" TEXT,
    "notes" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "models_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "predictions" (
    "id" UUID NOT NULL,
    "run_id" UUID NOT NULL,
    "frame_id" UUID NOT NULL,
    "class_id" INTEGER NOT NULL,
    "conf" DOUBLE PRECISION,
    "bbox" DOUBLE PRECISION[],
    "probs" JSONB,
    "polygons" JSONB,

    CONSTRAINT "predictions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "eval_operations" (
    "id" UUID NOT NULL,
    "op_type" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'completed',
    "subject_ids" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "params" JSONB NOT NULL DEFAULT '{}',
    "result" JSONB NOT NULL DEFAULT '{}',
    "error" TEXT,
    "created_by" UUID,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(6),

    CONSTRAINT "eval_operations_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "gold_items_gold_id_frame_id_idx" ON "gold_items"("gold_id", "frame_id");

-- CreateIndex
CREATE UNIQUE INDEX "models_model_version_key" ON "models"("model_version");

-- CreateIndex
CREATE INDEX "predictions_run_id_frame_id_idx" ON "predictions"("run_id", "frame_id");

-- CreateIndex
CREATE INDEX "predictions_frame_id_idx" ON "predictions"("frame_id");

-- CreateIndex
CREATE INDEX "eval_operations_op_type_created_at_idx" ON "eval_operations"("op_type", "created_at");

-- CreateIndex
CREATE INDEX "eval_operations_subject_ids_idx" ON "eval_operations" USING GIN ("subject_ids");

-- CreateIndex
CREATE INDEX "inference_runs_model_version_created_at_idx" ON "inference_runs"("model_version", "created_at");

-- AddForeignKey
ALTER TABLE "gold_items" ADD CONSTRAINT "gold_items_gold_id_fkey" FOREIGN KEY ("gold_id") REFERENCES "gold_sets"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "predictions" ADD CONSTRAINT "predictions_run_id_fkey" FOREIGN KEY ("run_id") REFERENCES "inference_runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "predictions" ADD CONSTRAINT "predictions_frame_id_fkey" FOREIGN KEY ("frame_id") REFERENCES "frames"("id") ON DELETE CASCADE ON UPDATE CASCADE;
