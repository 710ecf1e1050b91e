-- DropIndex
DROP INDEX "public"."control_samples_verdict_created_at_idx";

-- AlterTable
ALTER TABLE "public"."control_samples" DROP COLUMN "class_name",
DROP COLUMN "conf",
DROP COLUMN "checks",
DROP COLUMN "job_id",
DROP COLUMN "note";

-- DropTable
DROP TABLE "public"."autolabel_jobs";

-- DropTable
DROP TABLE "public"."gpu_slot";
