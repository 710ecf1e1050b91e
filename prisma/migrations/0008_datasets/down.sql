-- DropForeignKey
ALTER TABLE "export_jobs" DROP CONSTRAINT "export_jobs_slice_id_fkey";

-- DropForeignKey
ALTER TABLE "frame_embeddings" DROP CONSTRAINT "frame_embeddings_frame_id_fkey";

-- DropIndex
DROP INDEX "objects_frame_id_id_idx";

-- DropTable
DROP TABLE "slices";

-- DropTable
DROP TABLE "export_jobs";

-- DropTable
DROP TABLE "dataset_commits";

-- DropTable
DROP TABLE "frame_embeddings";

-- DropTable
DROP TABLE "lake_tables";

-- CreateIndex
CREATE INDEX "objects_frame_id_idx" ON "objects"("frame_id");
