-- DropForeignKey
ALTER TABLE "gold_items" DROP CONSTRAINT "gold_items_gold_id_fkey";

-- DropForeignKey
ALTER TABLE "predictions" DROP CONSTRAINT "predictions_run_id_fkey";

-- DropForeignKey
ALTER TABLE "predictions" DROP CONSTRAINT "predictions_frame_id_fkey";

-- DropIndex
DROP INDEX "inference_runs_model_version_created_at_idx";

-- AlterTable
ALTER TABLE "gold_sets" DROP COLUMN "content_hash",
DROP COLUMN "frame_ids",
DROP COLUMN "note",
DROP COLUMN "session_ids";

-- AlterTable
ALTER TABLE "inference_runs" DROP COLUMN "created_by",
DROP COLUMN "error",
DROP COLUMN "finished_at",
DROP COLUMN "frames_done",
DROP COLUMN "frames_planned",
DROP COLUMN "n_predictions",
DROP COLUMN "origin",
DROP COLUMN "scope",
DROP COLUMN "started_at",
DROP COLUMN "workflow_id";

-- DropTable
DROP TABLE "gold_items";

-- DropTable
DROP TABLE "models";

-- DropTable
DROP TABLE "predictions";

-- DropTable
DROP TABLE "eval_operations";
