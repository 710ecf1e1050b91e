-- DropForeignKey
ALTER TABLE "discovery_candidates" DROP CONSTRAINT "discovery_candidates_run_id_fkey";

-- DropForeignKey
ALTER TABLE "discovery_candidates" DROP CONSTRAINT "discovery_candidates_frame_id_fkey";

-- DropTable
DROP TABLE "discovery_runs";

-- DropTable
DROP TABLE "discovery_candidates";
