-- AlterTable
ALTER TABLE "export_jobs" ADD COLUMN     "reproduces_commit_id" TEXT,
ADD COLUMN     "reproduction_check_id" UUID;
