-- DropForeignKey
ALTER TABLE "public"."ingest_candidates" DROP CONSTRAINT "ingest_candidates_session_id_fkey";

-- DropForeignKey
ALTER TABLE "public"."rejected_frames" DROP CONSTRAINT "rejected_frames_session_id_fkey";

-- DropForeignKey
ALTER TABLE "public"."ingest_jobs" DROP CONSTRAINT "ingest_jobs_session_id_fkey";

-- DropTable
DROP TABLE "public"."ingest_candidates";

-- DropTable
DROP TABLE "public"."rejected_frames";

-- DropTable
DROP TABLE "public"."ingest_jobs";

-- DropTable
DROP TABLE "public"."uploads";

-- AlterTable
ALTER TABLE "public"."sessions" DROP COLUMN "duration_ms",
DROP COLUMN "source_meta",
DROP COLUMN "frame_count",
DROP COLUMN "workflow_id";
