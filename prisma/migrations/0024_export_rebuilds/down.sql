-- AlterTable
ALTER TABLE "export_jobs" DROP COLUMN "reproduces_commit_id",
DROP COLUMN "reproduction_check_id";
