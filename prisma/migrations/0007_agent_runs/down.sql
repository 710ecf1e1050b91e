-- DropForeignKey
ALTER TABLE "agent_run_frames" DROP CONSTRAINT "agent_run_frames_run_id_fkey";

-- DropForeignKey
ALTER TABLE "agent_run_frames" DROP CONSTRAINT "agent_run_frames_frame_id_fkey";

-- DropForeignKey
ALTER TABLE "agent_run_sessions" DROP CONSTRAINT "agent_run_sessions_run_id_fkey";

-- DropIndex
DROP INDEX "agent_runs_kind_created_at_idx";

-- DropIndex
DROP INDEX "autolabel_jobs_agent_run_id_idx";

-- AlterTable
ALTER TABLE "agent_runs" DROP COLUMN "error",
DROP COLUMN "finished_at",
DROP COLUMN "params",
DROP COLUMN "updated_at",
DROP COLUMN "workflow_id";

-- AlterTable
ALTER TABLE "autolabel_jobs" DROP COLUMN "agent_run_id";

-- DropTable
DROP TABLE "agent_run_frames";

-- DropTable
DROP TABLE "agent_run_sessions";
